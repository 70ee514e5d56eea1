pytest_plugins = ["copilot_driver.testing.fixtures"]
