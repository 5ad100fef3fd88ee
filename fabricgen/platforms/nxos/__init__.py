"""Cisco NX-OS: platform.yml, ownership.yml and the device driver (driver.py)."""
