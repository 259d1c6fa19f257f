// The coordinator's lease pool: LeaseJobs goes through it so that workers
// leasing faster than one database statement per call can serve are given
// jobs leased a few at a time ahead of demand.
//
// Every database lease takes what the caller asked for plus a prefetch sized
// by recent demand (jobs handed out per second by this replica, times half
// the hold time); the extra jobs are leased in the caller's name and held
// here. Later calls with the same adapters and labels take held jobs first,
// oldest first, without touching the database; when a pool runs below half
// its target, the maintenance thread tops it up in the background, so
// steady demand never waits for the database. A held job handed to another
// worker is recorded under it at its first heartbeat or its completion
// (until then the database names the worker whose call prefetched it). A
// held job nobody took within the hold time goes back to the queue with its
// attempt undone (Store::ReturnLeases). A slow trickle of leases (real jobs
// take seconds) prefetches nothing, so fair sharing between runs is
// unchanged: the prefetch is demand times half the hold time, below one job
// until jobs are leased at more than 2000/hold_ms per second.
//
// Held leases have the normal lease length from the moment they were taken
// (a job is handed out at most hold_ms later, far inside it). A coordinator
// that dies holding jobs loses nothing: their leases expire and they are
// leased again (costing an attempt each). Jobs of a cancelled or stopped run
// are dropped from the pool by DropRun (this replica; another replica's pool
// may still hand one out within hold_ms, and the worker's first heartbeat
// says "cancel").
#ifndef DUALSWARM_SERVICES_COORDINATOR_LEASE_POOL_H_
#define DUALSWARM_SERVICES_COORDINATOR_LEASE_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

class LeasePool {
 public:
  struct Options {
    int64_t hold_ms = 50;  // longest a prefetched job waits for a worker; 0: never prefetch
    int max_held = 256;    // jobs held per capability set at most
    int min_prefetch = 0;  // extra jobs every database lease takes at least (when hold_ms > 0)
    // Called (from the maintenance thread) with how many held jobs went
    // back to the queue, so waiting LeaseJobs calls can look again.
    std::function<void(int)> on_returned;
    // Called after each database lease (callers' and background prefetches)
    // with its duration in seconds.
    std::function<void(double)> on_database_lease;
  };

  struct Stats {
    int64_t database_leases = 0;  // Store::LeaseJobs calls
    int64_t handed_out = 0;       // jobs given to callers
    int64_t from_pool = 0;        // ... of which were held jobs
    int64_t returned = 0;         // held jobs put back in the queue
    int held = 0;                 // jobs held now
  };

  // Starts the maintenance thread (refills, returns stale held jobs).
  LeasePool(Store* store, Options options);
  // Stops the thread; call Close first to return what is held.
  ~LeasePool();
  LeasePool(const LeasePool&) = delete;
  LeasePool& operator=(const LeasePool&) = delete;

  // What one Lease call did, for metrics.
  struct LeaseOutcome {
    int from_pool = 0;  // jobs that came from held ones
    int held = 0;       // jobs this capability set's pool holds afterwards
  };

  // Up to req.max_jobs jobs for req.worker_id: held ones first, then from the
  // database (with a prefetch when demand is high). An error only when the
  // database failed and nothing was held.
  absl::StatusOr<std::vector<LeasedJob>> Lease(const LeaseRequest& req, LeaseOutcome* outcome = nullptr);

  // Forgets held jobs of a run that was cancelled or stopped (the store has
  // already marked them).
  void DropRun(int64_t run_id);

  // Returns every held job to the queue; the pool prefetches nothing
  // afterwards. For shutdown.
  absl::Status Close();

  // One maintenance pass now (the thread does this every hold_ms / 4):
  // returns held jobs older than hold_ms.
  absl::Status Maintain();

  Stats stats();

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    LeasedJob job;
    Clock::time_point since;
  };
  struct Pool {
    std::deque<Held> held;
    int in_flight = 0;           // extra jobs being leased right now
    bool refill_wanted = false;  // the maintenance thread should top it up
    LeaseRequest last;           // the latest caller's request (a refill leases in its name)
  };
  static std::string Key(const LeaseRequest& req);
  // Moves held jobs into *out up to req.max_jobs; returns how many.
  int TakeHeldLocked(Pool& pool, const LeaseRequest& req, std::vector<LeasedJob>* out);
  // The store's lease, timed for on_database_lease.
  absl::StatusOr<std::vector<LeasedJob>> DatabaseLease(const LeaseRequest& req);
  int64_t TargetLocked(Clock::time_point now);
  int PrefetchLocked(const Pool& pool, Clock::time_point now);
  static int64_t BucketIndex(Clock::time_point now);
  // Counts a call's jobs as demand and fills *outcome (may be null).
  void FinishLocked(const Pool& pool, int handed_out, int from_pool, Clock::time_point now, LeaseOutcome* outcome);
  void Loop();
  // Tops up pools that asked for it (maintenance thread).
  void Refill();

  Store* store_;
  Options options_;
  // mu_ guards everything below it but thread_: closed_, refill_wanted_,
  // pools_, the demand buckets and stats_. cv_ (with mu_) wakes the
  // maintenance thread when a refill is wanted or the pool closes.
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  bool refill_wanted_ = false;  // some pool's refill_wanted is set
  std::map<std::string, Pool> pools_;
  // Jobs handed out per 100 ms bucket over the last second (demand).
  static constexpr int kBuckets = 10;
  int64_t bucket_jobs_[kBuckets] = {};
  int64_t bucket_index_[kBuckets] = {};
  Stats stats_;
  std::thread thread_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_LEASE_POOL_H_
