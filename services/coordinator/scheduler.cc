#include "services/coordinator/scheduler.h"

#include <chrono>
#include <iostream>
#include <utility>

namespace dualswarm::coord {

CampaignScheduler::CampaignScheduler(Store* store, Options options) : store_(store), options_(std::move(options)) {
  if (!options_.clock)
    options_.clock = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  if (options_.interval_ms < 10) options_.interval_ms = 10;
  if (options_.max_per_tick < 1) options_.max_per_tick = 1;
}

CampaignScheduler::~CampaignScheduler() { Stop(); }

void CampaignScheduler::Start() {
  loop_.Start([this] { TickAndLog(); }, [this] { return absl::Milliseconds(options_.interval_ms); });
}

void CampaignScheduler::Stop() { loop_.Stop(); }

absl::StatusOr<std::vector<FiredCampaign>> CampaignScheduler::Tick(Micros now) {
  std::vector<FiredCampaign> fired;
  while (static_cast<int>(fired.size()) < options_.max_per_tick) {
    auto one = store_->FireDueCampaign(now);
    if (!one.ok()) {
      if (fired.empty()) return one.status();
      break;  // keep what committed; the rest waits for the next tick
    }
    if (!one->has_value()) break;  // nothing (more) is due
    fired.push_back(std::move(**one));
    if (options_.on_fired) options_.on_fired(fired.back());
  }
  return fired;
}

void CampaignScheduler::TickAndLog() {
  auto fired = Tick(options_.clock());
  if (!fired.ok()) {
    std::cerr << "dualswarm-coordinator: campaign scheduler: " << fired.status().message() << std::endl;
    return;
  }
  for (const FiredCampaign& f : *fired) {
    if (f.run_id != 0)
      std::cerr << "dualswarm-coordinator: campaign \"" << f.name << "\" fired run " << f.run_id << std::endl;
    else
      std::cerr << "dualswarm-coordinator: campaign \"" << f.name << "\" could not submit its run: " << f.error
                << std::endl;
  }
}

}  // namespace dualswarm::coord
