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
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void CampaignScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

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

void CampaignScheduler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    auto fired = Tick(options_.clock());
    if (!fired.ok()) {
      std::cerr << "dualswarm-coordinator: campaign scheduler: " << fired.status().message() << std::endl;
    } else {
      for (const FiredCampaign& f : *fired) {
        if (f.run_id != 0)
          std::cerr << "dualswarm-coordinator: campaign \"" << f.name << "\" fired run " << f.run_id << std::endl;
        else
          std::cerr << "dualswarm-coordinator: campaign \"" << f.name << "\" could not submit its run: " << f.error
                    << std::endl;
      }
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms), [&] { return stopping_; });
  }
}

}  // namespace dualswarm::coord
