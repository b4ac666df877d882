// Streams of the simulated runtime: in-order task queues, each drained by its own thread;
// events; host synchronisation (counted); stream capture into a graph (aclmdlRI) and its
// replay; kernel launches (ascend_sim_launch). The default stream (NULL) is one more stream.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "ascend_sim/ascend_sim.h"
#include "runtime.h"

namespace ascend_sim {

Counters& counters() {
  static Counters* c = new Counters();
  return *c;
}

void count_task(TaskKind kind) {
  Counters& c = counters();
  switch (kind) {
    case TaskKind::kKernel: c.launches++; break;
    case TaskKind::kH2D: c.h2d_copies++; break;
    case TaskKind::kD2H: c.d2h_copies++; break;
    case TaskKind::kD2D: c.d2d_copies++; break;
    case TaskKind::kMemset: c.memsets++; break;
    case TaskKind::kEvent: break;
  }
}

namespace {

struct Graph {
  std::vector<TaskPtr> tasks;
};

class Stream {
 public:
  Stream() : thread_([this] { drain(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // The sequence number of `task` (tasks complete in this order).
  uint64_t push(TaskPtr task) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    cv_.notify_all();
    return ++pushed_;
  }
  uint64_t pushed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pushed_;
  }
  void wait_for(uint64_t seq) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_ >= seq; });
  }
  // Waits for everything queued so far; returns (and clears) the first device fault.
  std::string synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t target = pushed_;
    cv_.wait(lock, [&] { return done_ >= target; });
    std::string fault;
    fault.swap(fault_);
    return fault;
  }

  Graph* capture = nullptr;  // guarded by the registry's mutex

 private:
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      TaskPtr task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::string fault = task->run();
      task.reset();
      lock.lock();
      if (!fault.empty() && fault_.empty()) fault_ = std::move(fault);
      ++done_;
      cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<TaskPtr> queue_;
  uint64_t pushed_ = 0, done_ = 0;
  bool stop_ = false;
  std::string fault_;
  std::thread thread_;
};

struct Event {
  Stream* stream = nullptr;
  uint64_t seq = 0;  // recorded: complete once the stream has done this many tasks
};

struct Registry {
  std::mutex mutex;
  std::set<Stream*> streams;
  std::set<Event*> events;
  std::set<Graph*> graphs;
  int capturing = 0;
  Stream* default_stream = nullptr;
  std::string last_fault;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed (stream threads)
  return *r;
}

// The Stream behind a handle (NULL: the default stream), or nullptr if it is not one.
Stream* stream_of(Registry& r, aclrtStream handle) {
  if (handle == nullptr) {
    if (r.default_stream == nullptr) r.default_stream = new Stream();
    return r.default_stream;
  }
  auto* s = static_cast<Stream*>(handle);
  return r.streams.count(s) != 0 ? s : nullptr;
}

aclError violation() {
  counters().capture_violations++;
  return ACL_ERROR_RT_STREAM_CAPTURED;
}

aclError report(Registry& r, std::string fault) {
  if (fault.empty()) return ACL_SUCCESS;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.last_fault = std::move(fault);
  return ACL_ERROR_RT_AICORE_EXCEPTION;
}

}  // namespace

aclError submit(aclrtStream handle, TaskPtr task) {
  Registry& r = registry();
  Stream* s;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    s = stream_of(r, handle);
    if (s == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
    if (s->capture != nullptr) {  // recorded, not run; counted when a replay submits it
      s->capture->tasks.push_back(std::move(task));
      return ACL_SUCCESS;
    }
  }
  count_task(task->kind);
  s->push(std::move(task));
  return ACL_SUCCESS;
}

aclError begin_synchronization() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.capturing > 0) return violation();
  counters().synchronizations++;
  return ACL_SUCCESS;
}

aclError begin_allocation() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.capturing > 0 ? violation() : ACL_SUCCESS;
}

}  // namespace ascend_sim

using namespace ascend_sim;

extern "C" {

aclError aclrtSetDevice(int32_t deviceId) { return deviceId == 0 ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM; }

aclError aclrtGetDevice(int32_t* deviceId) {
  if (deviceId == nullptr) return ACL_ERROR_INVALID_PARAM;
  *deviceId = 0;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
  if (stream == nullptr) return ACL_ERROR_INVALID_PARAM;
  Registry& r = registry();
  auto* s = new Stream();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.streams.insert(s);
  *stream = s;
  return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
  Registry& r = registry();
  Stream* s;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    s = stream == nullptr ? nullptr : stream_of(r, stream);
    if (s == nullptr || s->capture != nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
    r.streams.erase(s);
  }
  s->synchronize();
  delete s;  // joins its thread
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  Registry& r = registry();
  Stream* s;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    s = stream_of(r, stream);
    if (s == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
  }
  if (const aclError rc = begin_synchronization(); rc != ACL_SUCCESS) return rc;
  return report(r, s->synchronize());
}

aclError aclrtSynchronizeDevice(void) {
  Registry& r = registry();
  if (const aclError rc = begin_synchronization(); rc != ACL_SUCCESS) return rc;
  std::vector<Stream*> all;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    all.assign(r.streams.begin(), r.streams.end());
    all.push_back(stream_of(r, nullptr));
  }
  std::string first;
  for (Stream* s : all) {
    std::string fault = s->synchronize();
    if (first.empty()) first = std::move(fault);
  }
  return report(r, std::move(first));
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  if (event == nullptr) return ACL_ERROR_INVALID_PARAM;
  Registry& r = registry();
  auto* e = new Event();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.events.insert(e);
  *event = e;
  return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto* e = static_cast<Event*>(event);
  if (r.events.erase(e) == 0) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
  delete e;
  return ACL_SUCCESS;
}

// Marks the event with the position of a no-op task on the stream.
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto* e = static_cast<Event*>(event);
  Stream* s = stream_of(r, stream);
  if (r.events.count(e) == 0 || s == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
  if (s->capture != nullptr) return ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT;  // not modelled in graphs
  e->stream = s;
  e->seq = s->push(std::make_shared<const Task>(Task{TaskKind::kEvent, "record", [] { return std::string(); }}));
  return ACL_SUCCESS;
}

// The stream waits (on its own thread) until the event's recorded position is done.
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto* e = static_cast<Event*>(event);
  Stream* s = stream_of(r, stream);
  if (r.events.count(e) == 0 || s == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
  if (s->capture != nullptr) return ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT;
  if (e->stream == nullptr || e->stream == s) return ACL_SUCCESS;
  Stream* other = e->stream;
  const uint64_t seq = e->seq;
  s->push(std::make_shared<const Task>(Task{TaskKind::kEvent, "wait", [other, seq] {
                                              other->wait_for(seq);
                                              return std::string();
                                            }}));
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  Registry& r = registry();
  Stream* s;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto* e = static_cast<Event*>(event);
    if (r.events.count(e) == 0) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
    s = e->stream;
    seq = e->seq;
  }
  if (const aclError rc = begin_synchronization(); rc != ACL_SUCCESS) return rc;
  if (s != nullptr) s->wait_for(seq);
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode /*mode*/) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (stream == nullptr) return ACL_ERROR_RT_PARAM_INVALID;  // the default stream cannot capture
  Stream* s = stream_of(r, stream);
  if (s == nullptr) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
  if (s->capture != nullptr) return ACL_ERROR_RT_STREAM_CAPTURED;
  s->capture = new Graph();
  r.capturing++;
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* modelRI) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Stream* s = stream_of(r, stream);
  if (s == nullptr || status == nullptr) return ACL_ERROR_INVALID_PARAM;
  *status = s->capture != nullptr ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  if (modelRI != nullptr) *modelRI = s->capture;
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* modelRI) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Stream* s = stream_of(r, stream);
  if (s == nullptr || modelRI == nullptr) return ACL_ERROR_INVALID_PARAM;
  if (s->capture == nullptr) return ACL_ERROR_RT_STREAM_NOT_CAPTURED;
  r.graphs.insert(s->capture);
  *modelRI = s->capture;
  s->capture = nullptr;
  r.capturing--;
  return ACL_SUCCESS;
}

// Replays the graph's tasks, in capture order, on `stream`.
aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
  std::vector<TaskPtr> tasks;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto* g = static_cast<Graph*>(modelRI);
    if (r.graphs.count(g) == 0) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
    tasks = g->tasks;
  }
  for (TaskPtr& t : tasks) {
    if (const aclError rc = submit(stream, std::move(t)); rc != ACL_SUCCESS) return rc;
  }
  return ACL_SUCCESS;
}

aclError aclmdlRIDestroy(aclmdlRI modelRI) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto* g = static_cast<Graph*>(modelRI);
  if (r.graphs.erase(g) == 0) return ACL_ERROR_INVALID_RESOURCE_HANDLE;
  delete g;
  return ACL_SUCCESS;
}

aclError ascend_sim_launch(aclrtStream stream, const char* name, ascend_sim_task_fn run, void* ctx,
                           void (*release)(void* ctx)) {
  if (run == nullptr) return ACL_ERROR_INVALID_PARAM;
  std::shared_ptr<void> owned(ctx, [release](void* p) {
    if (release != nullptr) release(p);
  });
  std::string task_name = name != nullptr ? name : "kernel";
  return submit(stream, std::make_shared<const Task>(Task{TaskKind::kKernel, task_name, [run, owned, task_name] {
                                                             char error[1024] = {0};
                                                             if (run(owned.get(), error, sizeof(error)) == 0) {
                                                               return std::string();
                                                             }
                                                             return task_name + ": " + error;
                                                           }}));
}

const char* ascend_sim_last_fault(void) {
  Registry& r = registry();
  static thread_local std::string copy;
  std::lock_guard<std::mutex> lock(r.mutex);
  copy = r.last_fault;
  return copy.c_str();
}

int ascend_sim_capturing(aclrtStream stream) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (stream == nullptr) return r.capturing > 0;
  Stream* s = stream_of(r, stream);
  return s != nullptr && s->capture != nullptr;
}

void ascend_sim_get_counters(ascend_sim_counters* out) {
  if (out == nullptr) return;
  Counters& c = counters();
  out->synchronizations = c.synchronizations;
  out->h2d_copies = c.h2d_copies;
  out->d2h_copies = c.d2h_copies;
  out->d2d_copies = c.d2d_copies;
  out->allocations = c.allocations;
  out->frees = c.frees;
  out->launches = c.launches;
  out->memsets = c.memsets;
  out->pageable_refused = c.pageable_refused;
  out->capture_violations = c.capture_violations;
}

void ascend_sim_reset_counters(void) {
  Counters& c = counters();
  for (auto* a : {&c.synchronizations, &c.h2d_copies, &c.d2h_copies, &c.d2d_copies, &c.allocations, &c.frees,
                  &c.launches, &c.memsets, &c.pageable_refused, &c.capture_violations}) {
    a->store(0);
  }
}

}  // extern "C"
