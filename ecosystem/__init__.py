"""The ecosystem check: third-party libraries' test suites on torch and on ember (`make ecosystem`)."""
