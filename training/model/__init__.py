"""What a trained policy is, read by every layer above: the run's config (:mod:`.config`), the
network (:mod:`.networks`) and the checkpoint file that holds both (:mod:`.checkpoint`)."""
