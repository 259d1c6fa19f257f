#include "intermediary_net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "sut_net.h"

namespace dsut {
namespace {

[[noreturn]] void Usage(const char* name, const char* help, const std::string& why) {
  std::fprintf(stderr, "%s: %s\n\n%s", name, why.c_str(), help);
  std::exit(2);
}

// One answer a client is owed, filled in by its job.
struct Slot {
  bool done = false;
  uint64_t finished = 0;  // when its job finished (the order of `done`s)
  ClientAnswer answer;
};

// One client connection's answers, shared with its jobs.
struct AnswerQueue {
  std::mutex mu;  // guards everything below and the slots in `pending`
  std::condition_variable cv;
  std::deque<std::shared_ptr<Slot>> pending;  // in request order
  bool reading = true;
  int in_works = 0;
  uint64_t finished = 0;

  // The slot to write next: the first when it is done (or the first done).
  std::deque<std::shared_ptr<Slot>>::iterator Next(bool in_finish_order) {
    if (!in_finish_order) return !pending.empty() && pending.front()->done ? pending.begin() : pending.end();
    auto best = pending.end();
    for (auto it = pending.begin(); it != pending.end(); ++it)
      if ((*it)->done && (best == pending.end() || (*it)->finished < (*best)->finished)) best = it;
    return best;
  }
};

void WriteAnswers(int fd, AnswerQueue* q, bool in_finish_order) {
  std::unique_lock<std::mutex> lock(q->mu);
  while (true) {
    q->cv.wait(lock,
               [&] { return q->Next(in_finish_order) != q->pending.end() || (!q->reading && q->pending.empty()); });
    auto it = q->Next(in_finish_order);
    if (it == q->pending.end()) return;  // the client left and nothing is pending
    std::shared_ptr<Slot> slot = *it;
    q->pending.erase(it);
    if (slot->answer.hang_up) {
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
    lock.unlock();
    const bool sent = SendAll(fd, slot->answer.bytes);
    lock.lock();
    if (!sent) {
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
  }
}

}  // namespace

void ServeInRequestOrder(int fd, const std::function<std::function<ClientAnswer()>()>& next_job, bool in_finish_order) {
  auto q = std::make_shared<AnswerQueue>();
  std::thread writer([fd, q, in_finish_order] { WriteAnswers(fd, q.get(), in_finish_order); });
  while (std::function<ClientAnswer()> job = next_job()) {
    auto slot = std::make_shared<Slot>();
    {
      std::unique_lock<std::mutex> lock(q->mu);
      q->cv.wait(lock, [&] { return q->in_works < kMaxJobsPerClient; });
      q->pending.push_back(slot);
      ++q->in_works;
    }
    std::thread([q, slot, job = std::move(job)] {
      ClientAnswer answer = job();
      std::lock_guard<std::mutex> lock(q->mu);
      slot->answer = std::move(answer);
      slot->done = true;
      slot->finished = ++q->finished;
      --q->in_works;
      q->cv.notify_all();
    }).detach();
  }
  {
    std::lock_guard<std::mutex> lock(q->mu);
    q->reading = false;
  }
  q->cv.notify_all();
  writer.join();
  ::close(fd);
}

IntermediaryFlags ParseIntermediaryFlagsOrExit(int argc, char** argv, const char* name, const char* help,
                                               int max_mutant) {
  IntermediaryFlags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      std::fputs(help, stdout);
      std::exit(0);
    }
    std::string value;
    if (size_t eq = a.find('='); eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      Usage(name, help, a + " needs a value");
    }
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    const bool number = !value.empty() && *end == '\0' && n >= 0 && n <= 65535;
    if (a == "--dir") continue;
    if (!number) Usage(name, help, a + " needs a number from 0 to 65535");
    if (a == "--port")
      f.port = static_cast<int>(n);
    else if (a == "--origin-port")
      f.origin_port = static_cast<int>(n);
    else if (a == "--origin-connections")
      f.origin_connections = static_cast<int>(n);
    else if (a == "--origin-timeout-ms")
      f.origin_timeout_ms = static_cast<int>(n);
    else if (a == "--mutant")
      f.mutant = static_cast<int>(n);
    else
      Usage(name, help, "unknown flag " + a);
  }
  if (f.origin_port <= 0 || f.origin_port > 65535) Usage(name, help, "--origin-port is required (1-65535)");
  if (f.origin_connections < 1 || f.origin_connections > 64) Usage(name, help, "--origin-connections must be 1-64");
  if (f.mutant < 0 || f.mutant > max_mutant) Usage(name, help, "no such mutant");
  return f;
}

int ServeThreadPerClient(int port, const char* name, std::function<void(int fd)> serve_client) {
  ::signal(SIGPIPE, SIG_IGN);
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lfd, 64) != 0 ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::fprintf(stderr, "%s: listen: ", name);
    std::perror("");
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  while (true) {
    int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {  // e.g. out of descriptors: wait rather than spin
      ::usleep(10'000);
      continue;
    }
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::thread([serve_client, fd] { serve_client(fd); }).detach();
  }
}

int OriginPool::Borrow() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !idle_.empty() || open_ < most_; });
  if (!idle_.empty()) {
    int fd = idle_.back();
    idle_.pop_back();
    return fd;
  }
  ++open_;
  lock.unlock();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    Release(-1);
    return -1;
  }
  return fd;
}

void OriginPool::Release(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd >= 0) {
    idle_.push_back(fd);
  } else {
    --open_;
  }
  cv_.notify_one();
}

}  // namespace dsut
