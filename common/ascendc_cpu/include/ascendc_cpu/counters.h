// Per-launch traffic counters: what a kernel moved and computed, so efficiency is a number.
#pragma once
#include <cstdint>
#include <map>

namespace ascendc_cpu {

struct DmaStats {
  uint64_t transfers = 0;  // DataCopy / DataCopyPad calls
  uint64_t bursts = 0;     // contiguous blocks moved (blockCount summed)
  uint64_t bytes = 0;
  std::map<uint64_t, uint64_t> sizes;  // bytes per transfer -> number of transfers

  void Add(uint64_t transfer_bytes, uint64_t transfer_bursts) {
    ++transfers;
    bursts += transfer_bursts;
    bytes += transfer_bytes;
    ++sizes[transfer_bytes];
  }
  void Merge(const DmaStats& o) {
    transfers += o.transfers;
    bursts += o.bursts;
    bytes += o.bytes;
    for (const auto& kv : o.sizes) sizes[kv.first] += kv.second;
  }
};

struct Counters {
  uint64_t gm_read_bytes = 0;     // DMA and scalar reads of GM
  uint64_t gm_write_bytes = 0;    // DMA and scalar writes of GM
  uint64_t gm_scalar_reads = 0;   // GlobalTensor::GetValue calls
  uint64_t gm_scalar_writes = 0;  // GlobalTensor::SetValue calls
  DmaStats gm_to_local;           // GM -> UB / L1
  DmaStats local_to_gm;           // UB / L0C -> GM
  DmaStats local_to_local;        // UB -> UB, L1 -> L0A/L0B
  uint64_t vector_ops = 0;        // vector instructions issued (one per API call)
  uint64_t cube_ops = 0;          // Mmad calls
  uint64_t cube_macs = 0;         // multiply-accumulates done by Mmad
  uint64_t cube_int8_macs = 0;    // of which int8 x int8 (twice the fp16 rate in the timing model)
  uint64_t sync_alls = 0;         // SyncAll barriers passed

  void Merge(const Counters& o) {
    gm_read_bytes += o.gm_read_bytes;
    gm_write_bytes += o.gm_write_bytes;
    gm_scalar_reads += o.gm_scalar_reads;
    gm_scalar_writes += o.gm_scalar_writes;
    gm_to_local.Merge(o.gm_to_local);
    local_to_gm.Merge(o.local_to_gm);
    local_to_local.Merge(o.local_to_local);
    vector_ops += o.vector_ops;
    cube_ops += o.cube_ops;
    cube_macs += o.cube_macs;
    cube_int8_macs += o.cube_int8_macs;
    sync_alls += o.sync_alls;
  }
};

}  // namespace ascendc_cpu
