// SocketWatchdog: gives up on a peer that does not answer. A thread about to
// block on a socket (a database call) arms the watchdog with the socket and
// a deadline; if the call has not returned (disarmed) by then, the watchdog
// shuts the socket down (shutdown(2), the descriptor stays open), which wakes
// the blocked read or poll with end-of-file, so the caller fails promptly
// instead of holding its thread for as long as the peer stays frozen (a
// stopped server, a partition where the kernel still acknowledges).
//
// The store arms it around every transaction; a server-side
// statement_timeout handles slow statements, this handles a server that
// cannot even cancel them.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_SOCKET_WATCHDOG_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_SOCKET_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

namespace dualswarm::coord {

class SocketWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  SocketWatchdog();
  ~SocketWatchdog();  // stops the thread; armed sockets are left alone
  SocketWatchdog(const SocketWatchdog&) = delete;
  SocketWatchdog& operator=(const SocketWatchdog&) = delete;

  // Watches `fd` until Disarm(ticket). The caller keeps fd open until then.
  uint64_t Arm(int fd, Clock::time_point deadline);
  // Ends the watch; true if the deadline passed and the socket was shut down.
  bool Disarm(uint64_t ticket);

  uint64_t fired() const;  // sockets shut down so far

 private:
  struct Watch {
    int fd;
    Clock::time_point deadline;
    bool fired = false;
  };
  void Loop();

  // mu_ guards everything below it but thread_: watches_, next_ticket_,
  // fired_, wakes_at_ and stopping_. cv_ (with mu_) wakes the watching
  // thread when a watch is due before its next wake-up, or when it stops.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Watch> watches_;
  uint64_t next_ticket_ = 1;
  uint64_t fired_ = 0;
  Clock::time_point wakes_at_ = Clock::time_point::min();  // when the waiting thread wakes next
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_SOCKET_WATCHDOG_H_
