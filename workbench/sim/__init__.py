"""The invoice testbed: world, scripted agent, lossy compressor with ground truth, policies, dataset builder (see the
modules: world, agent, compressor, episode, judging, annotators, dataset)."""

__all__: list[str] = []
