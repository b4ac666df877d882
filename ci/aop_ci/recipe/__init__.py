"""Conda recipes checked on a machine without conda (``ci/recipe-check``).

conda-build cannot run here (no conda channels are reachable). What can be checked is checked
for real, and what is emulated says so:

``render``   conda-build's meta.yaml handling **emulated** (:mod:`.render`): Jinja2 with
             conda-build's functions, ``# [selector]`` lines, variants from
             ``recipes/conda_build_config.yaml``, for linux-64 and linux-aarch64.
``lint``     conda-forge-style and project rules (:mod:`.lint`), ours, not conda-smithy's.
``build``    the recipe's own build script, run for real by bash with conda-build's
             environment variables, into a host prefix that was solved and installed from a
             local channel with py-rattler (:mod:`.envs`, :mod:`.build`).
``package``  the new files of the prefix packed as a ``.conda`` with conda-package-handling,
             with conda-build's ``info/`` metadata and prefix placeholders (:mod:`.package`).
``index``    the local channel indexed by py-rattler.
``install``  each package solved alone (an op with only common) and installed into an empty
             prefix by py-rattler; an incompatible common must be refused.
``test``     the recipe's ``test:`` imports and commands, run against that prefix.

Dependencies that are not built from this repository (python, numpy, pip, compilers, torch,
...) come from a second local channel of **stand-ins** (:mod:`.standins`): metadata-only
conda packages named like the real ones, with this machine's versions, whose payload points
at the already-installed copies (a ``.pth`` file into a filtered view of the running Python's
site-packages, or a wrapper script for a tool). They are labelled ``aop_stand_in`` in their
build string and listed in the output.
"""
