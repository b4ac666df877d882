"""Drop-in call forms of the projects ascend-ops replaces, one module per source project.

=========================  =======================================================  ===========================
module                     their call                                               our op (package)
=========================  =======================================================  ===========================
``ms_custom_ops``          ``ms_custom_ops.reshape_and_cache``                      reshape_and_cache
``ms_custom_ops``          ``ms_custom_ops.sparse_flash_attention``                 sparse_flash_attention
``mindspore_ops``          ``mindspore.ops.sparse_flash_attention``                 sparse_flash_attention
``vllm_mindspore``         ``vllm_mindspore._custom_ops.advance_step_flashattn``    adv_step_flash
``vllm``                   ``vllm._custom_ops.reshape_and_cache_flash`` ("auto",    reshape_and_cache
                           fp8 with k_scale / v_scale)
``vllm``                   ``vllm._custom_ops.advance_step_flashattn``              adv_step_flash
``vllm``                   ``vllm._custom_ops.indexer_k_quant_and_cache`` (fused    indexer_k_quant_and_cache
                           fp8 + float32 scale cache, ue8m0)
``custom_pypto``           ``torch.ops.custom_pypto.npu_lightning_indexer_pto``     lightning_indexer
                           (-> Tensor)
``vllm_ascend``            ``torch.ops._C_ascend.npu_lightning_indexer``            lightning_indexer
                           (current form, -> (Tensor, Tensor))
``vllm_ascend``            ``npu_lightning_indexer_legacy``: the old single-tensor  lightning_indexer
                           form (-> Tensor)
``torch_npu``              ``torch_npu.npu_lightning_indexer`` (-> (Tensor,         lightning_indexer
                           Tensor); pre_tokens / next_tokens, return_value)
``ms_custom_ops``          ``ms_custom_ops.lightning_indexer`` (integer layouts,    lightning_indexer
                           -> Tensor)
``vllm_ascend``            ``torch.ops._C_ascend.npu_sparse_flash_attention``       sparse_flash_attention
                           (vllm-ascend's schema: attention_mode defaults to 2)
``vllm_ascend``            C8 write (``_quantize_kv_to_int8`` +                     reshape_and_cache
                           ``torch_npu._npu_reshape_and_cache``), fused
``torch_npu``              ``torch_npu.npu_sparse_flash_attention`` (torch_npu's    sparse_flash_attention
                           defaults: layout_kv "BSND", attention_mode 0)
``cann_ops_transformer``   ``torch.ops.cann_ops_transformer.lightning_indexer``     lightning_indexer
                           (CANN's v2: cmp_ratio, cu_seqlens, PA_BBND)
=========================  =======================================================  ===========================

Each function only translates its arguments (names, defaults, shapes the source project
accepts) to one of our ops and returns what the source project returns; every check of the
arguments our op takes is the op's own (host/ validation). The modules ship with the integration
package ``ascend-ops``, which depends on every op; where an op was removed from an environment
anyway, a module imports only the ops it translates to, when the module is imported (graph
compilers then see a plain module attribute), and raises ImportError naming the conda package
to install.

Defaults are the source project's, even where the source project's own kernel refuses them
(torch_npu's and MindSpore's ``attention_mode=0`` for sparse_flash_attention): the call then
fails in our op with its own message, as it fails there.
"""
