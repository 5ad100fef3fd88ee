"""SONiC (docs/sonic.md): platform data in platform.yml, the config_db schema and its checks in config_db.py."""
