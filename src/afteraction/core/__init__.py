"""The pure core: functions of their arguments only.

No I/O, no clock, no environment, no randomness: time is an argument and IDs are derived.
A test imports this package with every I/O library blocked.
"""
