// CampaignScheduler: the coordinator's background task that fires due
// campaigns (CampaignService) — every interval it asks the store to fire
// each active campaign whose next fire time has come, once.
//
// Exactly once across replicas: every coordinator runs a scheduler; a firing
// is one transaction (Store::FireDueCampaign) that locks the campaign row
// with FOR UPDATE SKIP LOCKED, re-checks that it is due, submits the run and
// moves next_fire_at past `now`. A second replica either skips the locked
// row or, once the first commits, no longer finds it due.
//
// Catch-up: a campaign whose fire times were missed (the coordinators were
// down) fires once, and its next fire time is computed from now, so N missed
// times are one run, not N.
//
// The clock is injectable: tests call Tick(now) with chosen times instead of
// starting the thread.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SCHEDULER_H_
#define DUALSWARM_SERVICES_COORDINATOR_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "services/coordinator/store/store.h"
#include "util/periodic_loop.h"

namespace dualswarm::coord {

class CampaignScheduler {
 public:
  struct Options {
    int64_t interval_ms = 5000;                          // how often the thread ticks
    int max_per_tick = 100;                              // firings per tick at most (the rest wait a tick)
    std::function<Micros()> clock;                       // now; default: the system clock
    std::function<void(const FiredCampaign&)> on_fired;  // after each committed firing (may be empty)
  };

  CampaignScheduler(Store* store, Options options);
  ~CampaignScheduler();  // Stop()

  // Starts the background thread (ticks at once, then every interval).
  void Start();
  // Stops and joins it; a tick in progress finishes its current firing.
  void Stop();

  // Fires every campaign due at `now`, each once; returns the firings, in
  // order. Safe to call from several schedulers (replicas) at once.
  absl::StatusOr<std::vector<FiredCampaign>> Tick(Micros now);

 private:
  // One tick at the clock's time, its firings logged.
  void TickAndLog();

  Store* store_;
  Options options_;
  PeriodicLoop loop_;  // TickAndLog(), every interval, between Start() and Stop()
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SCHEDULER_H_
