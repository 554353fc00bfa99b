"""InformativeBench rebuilt: dataset generators, their verifier, and the paper's scorers (appendix C.3)."""
