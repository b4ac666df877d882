"""Drop-in call forms of the projects ascend-ops replaces, one module per source project.

=========================  =======================================================  ===========================
module                     their call                                               our op (package)
=========================  =======================================================  ===========================
``ms_custom_ops``          ``ms_custom_ops.reshape_and_cache``                      reshape_and_cache
``vllm_mindspore``         ``vllm_mindspore._custom_ops.advance_step_flashattn``    adv_step_flash
``vllm``                   ``vllm._custom_ops.reshape_and_cache_flash``             reshape_and_cache
``custom_pypto``           ``torch.ops.custom.npu_lightning_indexer_pto``           lightning_indexer
``vllm_ascend``            ``torch.ops.custom.npu_lightning_indexer`` (vllm-ascend  lightning_indexer
                           / torch_npu keyword form)
=========================  =======================================================  ===========================

Each function only translates its arguments (names, defaults, shapes the source project
accepts) to one of our ops and returns what the source project returns; every check of the
arguments our op takes is the op's own (host/ validation). The modules ship with the integration
package ``ascend-ops``, which depends on every op; where an op was removed from an environment
anyway, a module imports only the op it translates to, when the module is imported (graph
compilers then see a plain module attribute), and raises ImportError naming the conda package
to install.
"""
