"""The transparency log's service side: signed C2SP checkpoints, the signer's key, proofs."""
