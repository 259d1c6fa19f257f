#include "workers/sut/warm_suts.h"

#include <cstdio>
#include <utility>

namespace dualswarm::workers {

WarmSuts::WarmSuts(std::string reset_command, int reset_timeout_ms, SutReaper* reaper, int max_idle)
    : reset_command_(std::move(reset_command)),
      reset_timeout_ms_(reset_timeout_ms),
      reaper_(reaper),
      max_idle_(static_cast<size_t>(max_idle < 1 ? 1 : max_idle)) {}

WarmSuts::~WarmSuts() {
  std::vector<std::unique_ptr<SutCluster>> idle;
  {
    absl::MutexLock lock(&mu_);
    idle.swap(idle_);
  }
  for (auto& sut : idle) reaper_->Adopt(std::move(sut));
}

std::unique_ptr<SutCluster> WarmSuts::TakeReset() {
  std::unique_ptr<SutCluster> sut;
  {
    absl::MutexLock lock(&mu_);
    if (idle_.empty() || failed_ > 0) return nullptr;
    sut = std::move(idle_.back());
    idle_.pop_back();
  }
  if (reset_command_.empty()) return sut;  // fresh partitions: no reset (header)
  if (absl::Status reset = sut->Reset(reset_command_, reset_timeout_ms_); !reset.ok()) {
    if (failed_++ == 0)  // once: the rest would repeat it
      std::fprintf(stderr, "reset failed, launching fresh SUTs instead: %s\n", std::string(reset.message()).c_str());
    reaper_->Adopt(std::move(sut));
    return nullptr;
  }
  ++resets_;
  return sut;
}

void WarmSuts::Give(std::unique_ptr<SutCluster> sut) {
  if (sut == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    if (idle_.size() < max_idle_ && failed_ == 0) {
      idle_.push_back(std::move(sut));
      return;
    }
  }
  reaper_->Adopt(std::move(sut));
}

}  // namespace dualswarm::workers
