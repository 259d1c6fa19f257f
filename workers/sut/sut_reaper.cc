#include "workers/sut/sut_reaper.h"

#include <algorithm>
#include <utility>

namespace dualswarm::workers {

SutReaper::SutReaper(int max_stopping) : max_queued_(static_cast<size_t>(std::max(max_stopping, 1))) {
  for (size_t i = 0; i < max_queued_; ++i) threads_.emplace_back([this] { StopQueued(); });
}

SutReaper::~SutReaper() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void SutReaper::Adopt(std::unique_ptr<SutCluster> sut) {
  if (sut == nullptr) return;
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &SutReaper::HasRoom));
  queue_.push_back(std::move(sut));
}

void SutReaper::StopQueued() {
  while (true) {
    std::unique_ptr<SutCluster> sut;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &SutReaper::HasWorkOrCloses));
      if (queue_.empty()) return;  // closing, nothing left
      sut = std::move(queue_.front());
      queue_.pop_front();
    }
    sut.reset();  // stops every node's process group, removes its directory, releases its ports
  }
}

}  // namespace dualswarm::workers
