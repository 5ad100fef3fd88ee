"""`fabricgen analyze`: will this fabric keep the GPUs busy?"""
