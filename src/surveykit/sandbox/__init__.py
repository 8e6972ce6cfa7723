"""The embedded sandbox: a stateful simulation of the v3.2 platform."""
