// Python side of the emulator, header-only, for pybind11 modules that expose `run_emu`:
//   ascendc_cpu::python::RegisterEmulatorError(m)  m.EmulatorError (a RuntimeError) with the
//                                                  attributes check, kernel, block, file, line
//   ascendc_cpu::python::ReportToDict(report)      LaunchReport -> dict (counters, per core, and the
//                                                  timing model: modelled_us, launch_us, gm_bound_us
//                                                  (hbm_bound_us, l2_bound_us, gm_bytes, hbm_bytes),
//                                                  bound, pipe_busy_us, pipe_busy_max_us)
//   ascendc_cpu::python::ParseOrder("both")        "in_order" | "shuffled" | "both"
// Include it only from pybind11 modules.
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include "ascendc_cpu/launch.h"

namespace ascendc_cpu::python {

namespace py = pybind11;

inline py::dict DmaToDict(const DmaStats& d) {
  py::dict sizes;
  for (const auto& kv : d.sizes) sizes[py::int_(kv.first)] = kv.second;
  py::dict r;
  r["transfers"] = d.transfers;
  r["bursts"] = d.bursts;
  r["bytes"] = d.bytes;
  r["sizes"] = sizes;
  return r;
}

inline py::dict CountersToDict(const Counters& c) {
  py::dict r;
  r["gm_read_bytes"] = c.gm_read_bytes;
  r["gm_write_bytes"] = c.gm_write_bytes;
  r["gm_scalar_reads"] = c.gm_scalar_reads;
  r["gm_scalar_writes"] = c.gm_scalar_writes;
  r["gm_to_local"] = DmaToDict(c.gm_to_local);
  r["local_to_gm"] = DmaToDict(c.local_to_gm);
  r["local_to_local"] = DmaToDict(c.local_to_local);
  r["vector_ops"] = c.vector_ops;
  r["cube_ops"] = c.cube_ops;
  r["cube_macs"] = c.cube_macs;
  r["cube_int8_macs"] = c.cube_int8_macs;
  r["sync_alls"] = c.sync_alls;
  return r;
}

inline py::dict ReportToDict(const LaunchReport& rep) {
  py::list orders, blocks;
  for (const auto& o : rep.orders) {
    py::list l;
    for (int32_t b : o) l.append(b);
    orders.append(l);
  }
  for (const BlockReport& b : rep.blocks) {
    py::dict d;
    d["block"] = b.block;
    d["core"] = b.core;
    d["group"] = b.group;
    d["modelled_us"] = b.modelled_us;
    py::dict pipes;
    for (const auto& kv : b.pipe_busy_us) pipes[py::str(kv.first)] = kv.second;
    d["pipe_busy_us"] = pipes;
    d["ub_high_water"] = b.ub_high_water;
    d["l1_high_water"] = b.l1_high_water;
    d["counters"] = CountersToDict(b.counters);
    blocks.append(d);
  }
  py::dict r;
  r["kernel_name"] = rep.kernel_name;
  r["block_dim"] = rep.block_dim;
  r["ub_bytes"] = rep.ub_bytes;
  r["orders"] = orders;
  r["totals"] = CountersToDict(rep.totals);
  r["blocks"] = blocks;
  r["max_ub_high_water"] = rep.max_ub_high_water;
  r["kernel_type"] = KernelTypeName(rep.kernel_type);
  // The timing MODEL (timing_model.h), not a measurement.
  py::dict busy, busy_max;
  for (const auto& kv : rep.pipe_busy_us) busy[py::str(kv.first)] = kv.second;
  for (const auto& kv : rep.pipe_busy_max_us) busy_max[py::str(kv.first)] = kv.second;
  r["modelled_us"] = rep.modelled_us;
  r["launch_us"] = rep.launch_us;
  r["gm_bound_us"] = rep.gm_bound_us;
  r["hbm_bound_us"] = rep.hbm_bound_us;
  r["l2_bound_us"] = rep.l2_bound_us;
  r["gm_bytes"] = rep.gm_bytes;
  r["hbm_bytes"] = rep.hbm_bytes;
  r["bound"] = rep.bound;
  r["pipe_busy_us"] = busy;
  r["pipe_busy_max_us"] = busy_max;
  return r;
}

// The block order of a launch from its Python name; ValueError (prefixed "<op>: ") otherwise.
inline Order ParseOrder(const std::string& s, const std::string& op = "") {
  if (s == "in_order") return Order::kInOrder;
  if (s == "shuffled") return Order::kShuffled;
  if (s == "both") return Order::kBoth;
  throw py::value_error((op.empty() ? "" : op + ": ") + "order should be 'in_order', 'shuffled' or 'both' but is '" +
                        s + "'");
}

inline void RegisterEmulatorError(py::module_& m) {
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> type;
  type.call_once_and_store_result([&] {
    py::object base = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
    py::object cls = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
        "EmulatorError", py::make_tuple(base),
        py::dict(py::arg("__module__") = m.attr("__name__"),
                 py::arg("__doc__") = "An AscendC emulator check failed; see .check, .kernel, .block, .file, .line."));
    return cls;
  });
  m.attr("EmulatorError") = type.get_stored();
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const EmulatorError& e) {
      py::object cls = type.get_stored();
      py::object exc = cls(e.what());
      exc.attr("check") = e.check();
      exc.attr("kernel") = e.kernel();
      exc.attr("block") = e.block();
      exc.attr("file") = e.file();
      exc.attr("line") = e.line();
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });
}

}  // namespace ascendc_cpu::python
