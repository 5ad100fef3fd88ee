"""InfiniBand: plan details (GUIDs, subnet managers, partitions, QoS), OpenSM rendering, the
ibsim topology, a partitions.conf validator, GUID import and verification against a real
OpenSM on a simulated fabric (ibsim)."""
