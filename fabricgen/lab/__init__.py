"""`fabricgen lab`: the planned Ethernet fabric on real FRR and lldpd in network namespaces."""
