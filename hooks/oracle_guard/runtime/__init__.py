"""What runs inside pytest: the plugin and the checks it makes at run time."""
