#include "services/coordinator/store/socket_watchdog.h"

#include <sys/socket.h>

namespace dualswarm::coord {

SocketWatchdog::SocketWatchdog() : thread_([this] { Loop(); }) {}

SocketWatchdog::~SocketWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

uint64_t SocketWatchdog::Arm(int fd, Clock::time_point deadline) {
  uint64_t ticket;
  bool earlier;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = next_ticket_++;
    watches_.emplace(ticket, Watch{fd, deadline});
    earlier = deadline < wakes_at_;
  }
  // Only a deadline before the thread's next wake-up needs it now (callers
  // arm with now + a fixed bound, so a busy store wakes it rarely).
  if (earlier) cv_.notify_all();
  return ticket;
}

bool SocketWatchdog::Disarm(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = watches_.find(ticket);
  if (it == watches_.end()) return false;
  bool fired = it->second.fired;
  watches_.erase(it);
  return fired;
}

uint64_t SocketWatchdog::fired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fired_;
}

void SocketWatchdog::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    Clock::time_point next = Clock::time_point::max();
    Clock::time_point now = Clock::now();
    for (auto& [ticket, w] : watches_) {
      if (w.fired) continue;
      if (w.deadline <= now) {
        // Under mu_: the owner cannot disarm (and close fd) meanwhile.
        ::shutdown(w.fd, SHUT_RDWR);
        w.fired = true;
        ++fired_;
      } else if (w.deadline < next) {
        next = w.deadline;
      }
    }
    wakes_at_ = next;
    if (next == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, next);
    }
    wakes_at_ = Clock::time_point::min();  // awake: Arm need not notify
  }
}

}  // namespace dualswarm::coord
