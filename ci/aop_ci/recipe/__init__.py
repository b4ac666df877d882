"""The conda packages, built for real by rattler-build (py-rattler-build), and checked.

:mod:`.rattler`    one recipe built with the variants file, by py-rattler-build: what
                   ``ci/build --conda`` runs on the release runners and ``ci/recipe-check`` here.
:mod:`.standins`   the local channel of stand-ins (``ci/standins/``) for what no offline channel
                   gives: python, pip, numpy, scikit-build-core, pybind11, the frameworks,
                   cmake, ninja, the compilers and the C library, each pointing at this machine's.
:mod:`.check`      ``ci/recipe-check``: common, then each op against the channel holding that
                   common, with the recipes' tests in rattler-build's test environments; then
                   each op solved and installed alone by py-rattler, ``ascend-ops check <package>`` (every op it ships)
                   run there, and a common of another minor or ABI refused by the solver.

Everything but the stand-ins is the real tools' behaviour: rendering, selectors, variants,
run_exports, build, packaging, indexing, solving, installing and the recipes' tests.
"""
