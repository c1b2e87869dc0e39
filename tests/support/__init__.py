"""Helpers several test suites share (not fakes of a network service: see ``tests.fakes``)."""
