#include "services/coordinator/lease_pool.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dualswarm::coord {

LeasePool::LeasePool(Store* store, Options options) : store_(store), options_(std::move(options)) {
  options_.hold_ms = std::max<int64_t>(options_.hold_ms, 0);
  options_.max_held = std::clamp(options_.max_held, 0, kMaxLeaseBatch);
  options_.min_prefetch = std::clamp(options_.min_prefetch, 0, options_.max_held);
  if (options_.hold_ms > 0) thread_ = std::thread([this] { Loop(); });
}

LeasePool::~LeasePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string LeasePool::Key(const LeaseRequest& req) {
  return absl::StrCat(absl::StrJoin(req.adapters, ","), "\n", absl::StrJoin(req.labels, ","));
}

int64_t LeasePool::BucketIndex(Clock::time_point now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() / 100;
}

void LeasePool::FinishLocked(const Pool& pool, int handed_out, int from_pool, Clock::time_point now,
                             LeaseOutcome* outcome) {
  int64_t index = BucketIndex(now);
  int slot = static_cast<int>(index % kBuckets);
  if (bucket_index_[slot] != index) {
    bucket_index_[slot] = index;
    bucket_jobs_[slot] = 0;
  }
  bucket_jobs_[slot] += handed_out;
  stats_.handed_out += handed_out;
  if (outcome != nullptr) *outcome = {from_pool, static_cast<int>(pool.held.size())};
}

// How many jobs a pool should hold: demand over the last second times half
// the hold time.
int64_t LeasePool::TargetLocked(Clock::time_point now) {
  if (options_.hold_ms <= 0 || closed_) return 0;
  int64_t index = BucketIndex(now);
  int64_t per_second = 0;
  for (int i = 0; i < kBuckets; ++i)
    if (index - bucket_index_[i] < kBuckets) per_second += bucket_jobs_[i];
  return std::min<int64_t>(per_second * options_.hold_ms / 2000, options_.max_held);
}

// Extra jobs a database lease should take now: the target less what is held
// or already being fetched.
int LeasePool::PrefetchLocked(const Pool& pool, Clock::time_point now) {
  if (options_.hold_ms <= 0 || closed_) return 0;
  int64_t want = TargetLocked(now) - static_cast<int64_t>(pool.held.size()) - pool.in_flight;
  want = std::max<int64_t>(want, options_.min_prefetch);
  int64_t room = options_.max_held - static_cast<int64_t>(pool.held.size()) - pool.in_flight;
  return static_cast<int>(std::clamp<int64_t>(std::min(want, room), 0, options_.max_held));
}

// Moves held jobs, oldest first, into *out until it has req.max_jobs.
int LeasePool::TakeHeldLocked(Pool& pool, const LeaseRequest& req, std::vector<LeasedJob>* out) {
  int taken = 0;
  while (static_cast<int>(out->size()) < req.max_jobs && !pool.held.empty()) {
    LeasedJob lj = std::move(pool.held.front().job);
    pool.held.pop_front();
    // Maybe taken out in another caller's name: the database records this
    // worker at its first heartbeat or its completion.
    lj.job.worker_id = req.worker_id;
    out->push_back(std::move(lj));
    ++taken;
  }
  stats_.from_pool += taken;
  return taken;
}

absl::StatusOr<std::vector<LeasedJob>> LeasePool::DatabaseLease(const LeaseRequest& req) {
  auto start = Clock::now();
  auto got = store_->LeaseJobs(req);
  if (options_.on_database_lease)
    options_.on_database_lease(std::chrono::duration<double>(Clock::now() - start).count());
  return got;
}

absl::StatusOr<std::vector<LeasedJob>> LeasePool::Lease(const LeaseRequest& req, LeaseOutcome* outcome) {
  int taken = 0;
  const std::string key = Key(req);
  std::vector<LeasedJob> out;
  int extra = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = Clock::now();
    Pool& pool = pools_[key];
    taken += TakeHeldLocked(pool, req, &out);
    pool.last = req;
    if (static_cast<int>(out.size()) == req.max_jobs) {
      FinishLocked(pool, static_cast<int>(out.size()), taken, now, outcome);
      // Running low: top up in the background before the pool is empty.
      if (pool.in_flight == 0 && !pool.refill_wanted &&
          static_cast<int64_t>(pool.held.size()) * 2 <= TargetLocked(now) && PrefetchLocked(pool, now) > 0) {
        pool.refill_wanted = refill_wanted_ = true;
        cv_.notify_all();
      }
      return out;
    }
    extra = std::min(PrefetchLocked(pool, now), kMaxLeaseBatch - (req.max_jobs - static_cast<int>(out.size())));
    pool.in_flight += extra;
  }
  const int need = req.max_jobs - static_cast<int>(out.size());
  LeaseRequest db = req;
  db.max_jobs = need + extra;
  auto got = DatabaseLease(db);
  std::vector<HeartbeatJob> unwanted;  // prefetched while Close ran
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto now = Clock::now();
    Pool& pool = pools_[key];
    pool.in_flight -= extra;
    ++stats_.database_leases;
    if (!got.ok()) {
      if (out.empty()) {
        if (outcome != nullptr) *outcome = {0, static_cast<int>(pool.held.size())};
        return got.status();
      }
    } else {
      for (auto& lj : *got) {
        if (static_cast<int>(out.size()) < req.max_jobs) {
          out.push_back(std::move(lj));
        } else if (closed_) {
          unwanted.push_back({lj.job.id, lj.job.lease_token});
        } else {
          pool.held.push_back({std::move(lj), now});
        }
      }
    }
    cv_.notify_all();  // for calls waiting on this prefetch (below)
    if (got.ok() && static_cast<int>(out.size()) < req.max_jobs) {
      // The statement skips jobs another statement has locked: a prefetch
      // in flight may be taking the very jobs this call needs. Wait for it
      // (briefly) and take from what it brought.
      cv_.wait_for(lock, std::chrono::seconds(1), [&] { return pool.in_flight == 0 || closed_; });
      taken += TakeHeldLocked(pool, req, &out);
    }
    FinishLocked(pool, static_cast<int>(out.size()), taken, Clock::now(), outcome);
  }
  if (!unwanted.empty()) (void)store_->ReturnLeases(unwanted);  // else they expire
  return out;
}

void LeasePool::DropRun(int64_t run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, pool] : pools_)
    pool.held.erase(
        std::remove_if(pool.held.begin(), pool.held.end(), [&](const Held& h) { return h.job.job.run_id == run_id; }),
        pool.held.end());
}

absl::Status LeasePool::Maintain() {
  std::vector<HeartbeatJob> stale;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto cutoff = Clock::now() - std::chrono::milliseconds(options_.hold_ms);
    for (auto& [key, pool] : pools_) {
      while (!pool.held.empty() && (closed_ || pool.held.front().since <= cutoff)) {
        stale.push_back({pool.held.front().job.job.id, pool.held.front().job.job.lease_token});
        pool.held.pop_front();
      }
    }
  }
  if (stale.empty()) return absl::OkStatus();
  auto back = store_->ReturnLeases(stale);
  if (!back.ok()) return back.status();  // they expire and are leased again
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.returned += *back;
  }
  if (*back > 0 && options_.on_returned) options_.on_returned(*back);
  return absl::OkStatus();
}

absl::Status LeasePool::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  return Maintain();
}

LeasePool::Stats LeasePool::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.held = 0;
  for (const auto& [key, pool] : pools_) s.held += static_cast<int>(pool.held.size());
  return s;
}

void LeasePool::Refill() {
  std::unique_lock<std::mutex> lock(mu_);
  refill_wanted_ = false;
  for (auto& [key, pool] : pools_) {
    if (!pool.refill_wanted) continue;
    pool.refill_wanted = false;
    int extra = PrefetchLocked(pool, Clock::now());
    if (extra <= 0) continue;
    pool.in_flight += extra;
    LeaseRequest db = pool.last;
    db.max_jobs = extra;
    lock.unlock();
    auto got = DatabaseLease(db);
    lock.lock();
    pool.in_flight -= extra;
    ++stats_.database_leases;
    cv_.notify_all();
    if (!got.ok()) continue;  // the next caller leases by itself
    auto now = Clock::now();
    for (auto& lj : *got) pool.held.push_back({std::move(lj), now});
    cv_.notify_all();  // for calls waiting on this prefetch
    // Closed meanwhile: Close's Maintain may have run already; return these.
    if (closed_) {
      lock.unlock();
      (void)Maintain();
      lock.lock();
    }
  }
}

void LeasePool::Loop() {
  auto every = std::chrono::milliseconds(std::max<int64_t>(options_.hold_ms / 4, 5));
  bool failing = false;  // report a failure once, not every pass
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, every, [&] { return closed_ || refill_wanted_; });
    if (closed_) break;
    if (refill_wanted_) {
      lock.unlock();
      Refill();
      lock.lock();
    }
    bool work = false;
    for (const auto& [key, pool] : pools_) work |= !pool.held.empty();
    if (!work) continue;
    lock.unlock();
    absl::Status st = Maintain();
    if (!st.ok() && !failing) std::cerr << "dualswarm-coordinator: lease pool: " << st.message() << " (will retry)\n";
    failing = !st.ok();
    lock.lock();
  }
}

}  // namespace dualswarm::coord
