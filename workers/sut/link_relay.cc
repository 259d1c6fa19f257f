#include "workers/sut/link_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dualswarm::workers {
namespace {

constexpr size_t kMaxBuffered = 256 * 1024;  // per direction of a connection: stop reading past it

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A listening socket on a free loopback port; its port in *port.
absl::StatusOr<int> ListenOnFreePort(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("link relay: socket: ", strerror(errno)));
  sockaddr_in a = Loopback(0);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::string why = strerror(errno);
    close(fd);
    return absl::InternalError(absl::StrCat("link relay: cannot listen on 127.0.0.1: ", why));
  }
  *port = ntohs(a.sin_port);
  return fd;
}

// A non-blocking connection to 127.0.0.1:port, or -1 (the node is down).
// Loopback connects complete or fail at once.
int ConnectTo(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a = Loopback(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Reads what `fd` has into `into` (up to the buffer bound). False on an
// error; *eof when the peer shut down its sending side.
bool ReadInto(int fd, std::string* into, bool* eof) {
  char buf[16384];
  while (into->size() < kMaxBuffered) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {
      *eof = true;
      return true;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
  return true;
}

// Writes as much of `from` to `fd` as it takes. False on an error.
bool WriteFrom(int fd, std::string* from) {
  while (!from->empty()) {
    ssize_t n = send(fd, from->data(), from->size(), MSG_NOSIGNAL);
    if (n > 0) {
      from->erase(0, static_cast<size_t>(n));
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LinkRelays>> LinkRelays::Listen(int nodes, int ports_each) {
  std::unique_ptr<LinkRelays> r(new LinkRelays());
  r->nodes_ = nodes;
  r->ports_each_ = ports_each;
  r->relay_ports_.assign(static_cast<size_t>(nodes * nodes * ports_each), 0);
  r->isolated_.assign(static_cast<size_t>(nodes), false);
  for (int from = 0; from < nodes; ++from) {
    for (int to = 0; to < nodes; ++to) {
      if (from == to) continue;
      for (int which = 0; which < ports_each; ++which) {
        Listener l;
        l.from = from;
        l.to = to;
        l.target_port = which;  // an index until Start
        absl::StatusOr<int> fd =
            ListenOnFreePort(&r->relay_ports_[static_cast<size_t>((from * nodes + to) * ports_each + which)]);
        if (!fd.ok()) return fd.status();  // the destructor closes the listeners made so far
        l.fd = *fd;
        r->listeners_.push_back(l);
      }
    }
  }
  if (pipe2(r->wake_, O_NONBLOCK | O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("link relay: pipe: ", strerror(errno)));
  return r;
}

void LinkRelays::Start(const std::vector<std::vector<int>>& ports_per_node) {
  for (Listener& l : listeners_)
    l.target_port = ports_per_node[static_cast<size_t>(l.to)][static_cast<size_t>(l.target_port)];
  thread_ = std::thread([this] { Loop(); });
}

LinkRelays::~LinkRelays() {
  stop_ = true;
  if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (Listener& l : listeners_) close(l.fd);
  for (Pipe& p : pipes_) {
    close(p.a);
    close(p.b);
  }
  for (int fd : wake_)
    if (fd >= 0) close(fd);
}

int LinkRelays::RelayPort(int from, int to, int which) const {
  return relay_ports_[static_cast<size_t>((from * nodes_ + to) * ports_each_ + which)];
}

void LinkRelays::Isolate(int node) {
  if (node < 0 || node >= nodes_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    isolated_[static_cast<size_t>(node)] = true;
  }
  (void)!write(wake_[1], "x", 1);
}

void LinkRelays::Heal(int node) {
  if (node < 0 || node >= nodes_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    isolated_[static_cast<size_t>(node)] = false;
  }
  (void)!write(wake_[1], "x", 1);
}

bool LinkRelays::Cut(int from, int to) {
  return isolated_[static_cast<size_t>(from)] || isolated_[static_cast<size_t>(to)];
}

void LinkRelays::Loop() {
  enum Kind { kWake, kListener, kSideA, kSideB };
  std::vector<pollfd> fds;
  std::vector<std::pair<Kind, size_t>> who;
  while (!stop_) {
    fds.clear();
    who.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    who.emplace_back(kWake, 0);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < listeners_.size(); ++i) {
        if (Cut(listeners_[i].from, listeners_[i].to)) continue;  // connects wait in the backlog
        fds.push_back({listeners_[i].fd, POLLIN, 0});
        who.emplace_back(kListener, i);
      }
      for (size_t i = 0; i < pipes_.size(); ++i) {
        const Pipe& p = pipes_[i];
        if (Cut(p.from, p.to)) continue;  // bytes wait in the kernel
        short a = 0, b = 0;
        if (!p.a_eof && p.a_to_b.size() < kMaxBuffered) a |= POLLIN;
        if (!p.b_to_a.empty()) a |= POLLOUT;
        if (!p.b_eof && p.b_to_a.size() < kMaxBuffered) b |= POLLIN;
        if (!p.a_to_b.empty()) b |= POLLOUT;
        // A side with nothing to do is left out (poll ignores a negative
        // fd): a hung-up side would otherwise wake the loop for ever.
        fds.push_back({a != 0 ? p.a : -1, a, 0});
        who.emplace_back(kSideA, i);
        fds.push_back({b != 0 ? p.b : -1, b, 0});
        who.emplace_back(kSideB, i);
      }
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      const short ev = fds[k].revents;
      if (ev == 0) continue;
      auto [kind, i] = who[k];
      if (kind == kWake) {
        char drain[64];
        while (read(wake_[0], drain, sizeof(drain)) > 0) {
        }
        continue;
      }
      if (kind == kListener) {
        int a = accept4(listeners_[i].fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (a < 0) continue;
        int b = ConnectTo(listeners_[i].target_port);
        if (b < 0) {
          close(a);  // the node is down: its peer sees the connection refused, as good as
          continue;
        }
        Pipe pipe;
        pipe.a = a;
        pipe.b = b;
        pipe.from = listeners_[i].from;
        pipe.to = listeners_[i].to;
        pipes_.push_back(std::move(pipe));
        continue;
      }
      Pipe& p = pipes_[i];
      const bool side_a = kind == kSideA;
      const int fd = side_a ? p.a : p.b;
      std::string& in = side_a ? p.a_to_b : p.b_to_a;
      std::string& out = side_a ? p.b_to_a : p.a_to_b;
      bool& eof = side_a ? p.a_eof : p.b_eof;
      if ((ev & POLLIN) || ((ev & (POLLHUP | POLLERR)) && !eof)) {
        if (!ReadInto(fd, &in, &eof)) p.dead = true;
      }
      if ((ev & POLLOUT) && !WriteFrom(fd, &out)) p.dead = true;
      if ((ev & POLLERR) && !(ev & POLLIN)) p.dead = true;
    }
    // Forward EOFs whose data has gone through; drop finished or broken
    // connections (closing one end closes the other: a node that exits
    // ends its peers' connections through the relay too).
    for (Pipe& p : pipes_) {
      if (p.a_eof && p.a_to_b.empty()) shutdown(p.b, SHUT_WR);
      if (p.b_eof && p.b_to_a.empty()) shutdown(p.a, SHUT_WR);
      if (p.a_eof && p.b_eof && p.a_to_b.empty() && p.b_to_a.empty()) p.dead = true;
    }
    for (size_t i = 0; i < pipes_.size();) {
      if (!pipes_[i].dead) {
        ++i;
        continue;
      }
      close(pipes_[i].a);
      close(pipes_[i].b);
      pipes_[i] = std::move(pipes_.back());
      pipes_.pop_back();
    }
  }
}

}  // namespace dualswarm::workers
