#include "services/coordinator/service/state.h"

#include <algorithm>
#include <optional>

#include "absl/time/time.h"
#include "services/coordinator/proto_convert.h"

namespace dualswarm::coord {

ServiceState::ServiceState(Store* store, ServiceOptions options)
    : store_(store),
      options_(options),
      auth_(store, options.require_auth, options.token_cache_ms),
      lease_pool_(store, LeasePoolOptions(options, this)) {}

LeasePool::Options ServiceState::LeasePoolOptions(const ServiceOptions& o, ServiceState* state) {
  LeasePool::Options po;
  po.hold_ms = o.lease_prefetch_ms;
  po.on_returned = [state](int jobs) {
    if (state->metrics() != nullptr) state->metrics()->LeasePoolReturned(jobs);
    state->Wake();
  };
  po.on_database_lease = [state](double seconds) {
    if (state->metrics() != nullptr) state->metrics()->LeaseQueried(seconds);
  };
  return po;
}

namespace {

// A row read from the store as a shared message (what the caches keep).
template <typename Proto, typename Row>
absl::StatusOr<std::shared_ptr<const Proto>> SharedProto(const absl::StatusOr<Row>& row,
                                                         void (*to_proto)(const Row&, Proto*)) {
  if (!row.ok()) return row.status();
  auto proto = std::make_shared<Proto>();
  to_proto(*row, proto.get());
  return std::shared_ptr<const Proto>(std::move(proto));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const v1::Spec>> ServiceState::CachedSpec(const std::string& hash) {
  {
    absl::MutexLock lock(&cache_mu_);
    if (auto it = spec_cache_.find(hash); it != spec_cache_.end()) return it->second;
  }
  auto spec = SharedProto(store_->GetSpec(hash), SpecToProto);
  if (!spec.ok()) return spec.status();
  size_t bytes = (*spec)->source().size();
  absl::MutexLock lock(&cache_mu_);
  if (spec_cache_bytes_ + bytes > kMaxCachedSpecBytes) {
    spec_cache_.clear();
    spec_cache_bytes_ = 0;
  }
  if (spec_cache_.emplace(hash, *spec).second) spec_cache_bytes_ += bytes;
  return spec;
}

absl::StatusOr<std::shared_ptr<const v1::Target>> ServiceState::CachedTarget(int64_t id) {
  {
    absl::MutexLock lock(&cache_mu_);
    if (auto it = target_cache_.find(id); it != target_cache_.end()) return it->second;
  }
  auto target = SharedProto(store_->GetTarget(id), TargetToProto);
  if (!target.ok()) return target.status();
  absl::MutexLock lock(&cache_mu_);
  if (target_cache_.size() >= kMaxCachedEntries) target_cache_.clear();
  target_cache_.emplace(id, *target);
  return target;
}

absl::StatusOr<WorkerInfo> ServiceState::CachedWorker(const std::string& id, bool touch) {
  auto now = Clock::now();
  auto every = std::chrono::milliseconds(std::clamp<int64_t>(options_.lease_ms / 3, 50, 10000));
  std::optional<WorkerInfo> hit;
  bool touch_now = false;
  {
    absl::MutexLock lock(&cache_mu_);
    auto it = worker_cache_.find(id);
    if (it != worker_cache_.end()) {
      hit = it->second.info;
      if (touch && now - it->second.touched >= every) {
        it->second.touched = now;
        touch_now = true;
      }
    }
  }
  if (hit.has_value()) {
    if (touch_now) (void)store_->TouchWorker(id);  // best effort: only the metric depends on it
    return *hit;
  }
  auto info = store_->GetWorker(id);
  if (!info.ok()) return info.status();
  if (touch) (void)store_->TouchWorker(id);
  absl::MutexLock lock(&cache_mu_);
  if (worker_cache_.size() >= kMaxCachedEntries) worker_cache_.clear();
  worker_cache_[id] = WorkerEntry{*info, now};
  return *info;
}

uint64_t ServiceState::WakeGeneration() {
  absl::MutexLock lock(&wake_mu_);
  return wake_generation_;
}

void ServiceState::Wake() {
  absl::MutexLock lock(&wake_mu_);
  ++wake_generation_;  // waiters' conditions are looked at again on unlock
}

bool ServiceState::WaitForJobs(uint64_t seen, Clock::time_point until) {
  absl::MutexLock lock(&wake_mu_);
  auto woken = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(wake_mu_) { return stopping_ || wake_generation_ != seen; };
  wake_mu_.AwaitWithTimeout(absl::Condition(&woken), absl::FromChrono(until - Clock::now()));
  return !stopping_;
}

void ServiceState::StopWaiting() {
  absl::MutexLock lock(&wake_mu_);
  stopping_ = true;
}

}  // namespace dualswarm::coord
