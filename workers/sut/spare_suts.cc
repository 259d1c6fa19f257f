#include "workers/sut/spare_suts.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace dualswarm::workers {

SpareSuts::SpareSuts(SpareLaunch launch, int depth, int max_depth, SutReaper* reaper)
    : launch_(std::move(launch)),
      max_depth_(static_cast<size_t>(std::max({depth, max_depth, 1}))),
      reaper_(reaper),
      depth_(static_cast<size_t>(std::max(depth, 0))) {
  for (size_t i = 0; i < max_depth_; ++i) threads_.emplace_back([this] { LaunchLoop(); });
}

int SpareSuts::depth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(depth_);
}

int SpareSuts::ready() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(ready_.size());
}

SpareSuts::~SpareSuts() {
  closing_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  for (std::thread& t : threads_) t.join();
  std::deque<std::unique_ptr<SutCluster>> unused;
  {
    absl::MutexLock lock(&mu_);
    unused.swap(ready_);
  }
  for (std::unique_ptr<SutCluster>& sut : unused) reaper_->Adopt(std::move(sut));
}

void SpareSuts::LaunchLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &SpareSuts::ThreadMayGo));
      if (stopped_) return;
      ++starting_;
    }
    absl::StatusOr<std::unique_ptr<SutCluster>> sut =
        SutCluster::Launch(launch_.node, launch_.nodes, launch_.relay_links, &closing_);
    absl::MutexLock lock(&mu_);
    --starting_;
    if (!sut.ok()) {
      if (!stopped_ && !closing_)
        std::fprintf(stderr, "launching spare SUTs failed, each rerun launches its own: %s\n",
                     std::string(sut.status().message()).c_str());
      stopped_ = true;
      return;
    }
    ready_.push_back(*std::move(sut));
  }
}

std::unique_ptr<SutCluster> SpareSuts::Take() {
  while (true) {
    std::unique_ptr<SutCluster> sut;
    {
      absl::MutexLock lock(&mu_);
      if (!TakerMayGo() && depth_ < max_depth_) ++depth_;  // launches lag behind takers
      mu_.Await(absl::Condition(this, &SpareSuts::TakerMayGo));
      if (ready_.empty()) return nullptr;  // stopped
      sut = std::move(ready_.front());
      ready_.pop_front();
    }
    if (sut->Alive()) {
      ++taken_;
      return sut;
    }
    reaper_->Adopt(std::move(sut));  // died while it waited: the next one
  }
}

}  // namespace dualswarm::workers
