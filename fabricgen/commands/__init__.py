"""Helpers every command shares (`fabricgen`, `fabricgen ib`, `fabricgen analyze`): the top layer."""
