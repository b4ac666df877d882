"""Per-package CI and release tooling of ascend-ops, behind the scripts in ``ci/``.

=====================  ==========================  =========================================
script                 module                      what it does
=====================  ==========================  =========================================
``ci/changed``         :mod:`aop_ci.changed`       the packages a git range touches, as JSON
``ci/check-release``   :mod:`aop_ci.release`       version bumps, changelog entries, tags
``ci/recipe-check``    :mod:`aop_ci.recipe.check`  conda recipes checked without conda
``ci/build``           :mod:`aop_ci.build`         wheels here, ``conda build`` where conda is
``ci/packages``        :mod:`aop_ci.packages`      conda-build, then ``conda install`` per op
=====================  ==========================  =========================================

:mod:`aop_ci.repo` finds the packages (common, devkit, every ``ops/<op>/``, integration) by discovery and
reads each one's version from its own single source, in the working tree or at a git ref.
"""
