#include "workers/sut/link_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "workers/sut/port_owner.h"

namespace dualswarm::workers {
namespace {

constexpr size_t kMaxBuffered = 256 * 1024;  // per direction of a connection: stop reading past it
// Relayed connections at once (what the nodes open is theirs to choose):
// past it, and for a moment after an accept fails (out of descriptors),
// new connects wait in the listeners' backlogs.
constexpr size_t kMaxPipes = 1024;
constexpr int kAcceptPauseMs = 50;

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

// Writes as much of the first `limit` bytes of `from` to `fd` as it
// takes. False on an error.
bool WriteFrom(int fd, std::string* from, size_t limit) {
  while (limit > 0) {
    ssize_t n = send(fd, from->data(), limit, MSG_NOSIGNAL);
    if (n > 0) {
      from->erase(0, static_cast<size_t>(n));
      limit -= static_cast<size_t>(n);
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  return true;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LinkRelays>> LinkRelays::Listen(int nodes, int ports_each) {
  std::unique_ptr<LinkRelays> r(new LinkRelays());
  r->nodes_ = nodes;
  r->ports_each_ = ports_each;
  r->relay_ports_.assign(static_cast<size_t>(nodes * ports_each), 0);
  r->isolated_.assign(static_cast<size_t>(nodes), false);
  r->cut_.assign(static_cast<size_t>(nodes * nodes), false);
  r->slow_ms_.assign(static_cast<size_t>(nodes), 0);
  r->node_pgid_.assign(static_cast<size_t>(nodes), 0);
  for (int to = 0; to < nodes; ++to) {
    for (int which = 0; which < ports_each; ++which) {
      Listener l;
      l.to = to;
      l.which = which;
      absl::StatusOr<int> fd = ListenOnFreePort(&l.port);
      if (!fd.ok()) return fd.status();  // the destructor closes the listeners made so far
      l.fd = *fd;
      r->relay_ports_[static_cast<size_t>(to * ports_each + which)] = l.port;
      r->listeners_.push_back(l);
    }
  }
  if (pipe2(r->wake_, O_NONBLOCK | O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("link relay: pipe: ", strerror(errno)));
  return r;
}

void LinkRelays::Start(const std::vector<std::vector<int>>& ports_per_node) {
  for (Listener& l : listeners_)
    l.target_port = ports_per_node[static_cast<size_t>(l.to)][static_cast<size_t>(l.which)];
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

int LinkRelays::RelayPort(int to, int which) const {
  return relay_ports_[static_cast<size_t>(to * ports_each_ + which)];
}

void LinkRelays::SetNodeProcess(int node, pid_t pgid) {
  if (node < 0 || node >= nodes_) return;
  std::lock_guard<std::mutex> lock(mu_);
  node_pgid_[static_cast<size_t>(node)] = pgid;
}

void LinkRelays::SetIsolated(int node, bool isolated) {
  if (node < 0 || node >= nodes_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    isolated_[static_cast<size_t>(node)] = isolated;
  }
  (void)!write(wake_[1], "x", 1);
}

void LinkRelays::SetCutLinks(const std::vector<std::pair<int, int>>& links) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cut_.assign(cut_.size(), false);
    for (const auto& [a, b] : links) {
      if (a < 0 || b < 0 || a >= nodes_ || b >= nodes_) continue;
      cut_[static_cast<size_t>(a * nodes_ + b)] = cut_[static_cast<size_t>(b * nodes_ + a)] = true;
    }
  }
  (void)!write(wake_[1], "x", 1);
}

void LinkRelays::SetSlow(int node, int delay_ms) {
  if (node < 0 || node >= nodes_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slow_ms_[static_cast<size_t>(node)] = std::max(delay_ms, 0);
  }
  (void)!write(wake_[1], "x", 1);
}

int LinkRelays::DelayMs(int from, int to) const {
  if (from < 0) return 0;  // a client's connection
  return std::max(slow_ms_[static_cast<size_t>(from)], slow_ms_[static_cast<size_t>(to)]);
}

size_t LinkRelays::Flow::Ready(int64_t now_ms) {
  while (!delayed.empty() && delayed.front().first <= now_ms) delayed.pop_front();
  size_t held = 0;
  for (const auto& chunk : delayed) held += chunk.second;
  return bytes.size() - held;
}

void LinkRelays::Flow::Delay(size_t n, int64_t at_ms) {
  if (n == 0) return;
  if (!delayed.empty()) at_ms = std::max(at_ms, delayed.back().first);  // never ahead of earlier bytes
  delayed.emplace_back(at_ms, n);
}

bool LinkRelays::Cut(int from, int to) const {
  if (isolated_[static_cast<size_t>(to)]) return true;
  return from >= 0 && (isolated_[static_cast<size_t>(from)] || cut_[static_cast<size_t>(from * nodes_ + to)]);
}

namespace {

// The inode of the loopback socket connected from local port `port` to
// `relay_port`, from /proc/net/tcp ("local_address rem_address ... inode",
// ports in hex); 0 when there is none.
unsigned long SocketInode(int port, int relay_port) {
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, skip;
    unsigned long inode = 0;
    fields >> slot >> local >> remote;
    for (int i = 0; i < 6; ++i) fields >> skip;  // st tx:rx tr:when retrnsmt uid timeout
    fields >> inode;
    const size_t lc = local.find(':'), rc = remote.find(':');
    if (lc == std::string::npos || rc == std::string::npos) continue;
    if (std::strtol(local.c_str() + lc + 1, nullptr, 16) == port &&
        std::strtol(remote.c_str() + rc + 1, nullptr, 16) == relay_port)
      return inode;
  }
  return 0;
}

// The process group of process `pid` (field 5 of /proc/PID/stat), or 0.
pid_t ProcessGroup(const std::string& pid) {
  // Not an istreambuf_iterator: it lets the read error of a process that
  // exited after the open escape as an exception (a crash seen in CI).
  const std::string text = ReadProcFile("/proc/" + pid + "/stat", 4096);
  const size_t paren = text.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream rest(text.substr(paren + 1));
  std::string state;
  long ppid = 0, pgrp = 0;
  rest >> state >> ppid >> pgrp;
  return static_cast<pid_t>(pgrp);
}

// Whether process `pid` holds the socket `inode`.
bool HoldsSocket(const std::string& pid, unsigned long inode) {
  const std::string dir = "/proc/" + pid + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  const std::string want = "socket:[" + std::to_string(inode) + "]";
  bool found = false;
  char target[64];
  while (dirent* e = readdir(d)) {
    const std::string link = dir + "/" + e->d_name;
    ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    if (want.compare(0, want.size(), target, static_cast<size_t>(n)) == 0) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

}  // namespace

// Which node opened the connection `accepted_fd` to `relay_port`: the node
// whose process group holds the other end; -1 for none (a client).
int LinkRelays::NodeOfConnection(int accepted_fd, int relay_port) {
  sockaddr_in peer{};
  socklen_t len = sizeof(peer);
  if (getpeername(accepted_fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return -1;
  const unsigned long inode = SocketInode(ntohs(peer.sin_port), relay_port);
  if (inode == 0) return -1;
  std::vector<pid_t> groups;
  {
    std::lock_guard<std::mutex> lock(mu_);
    groups = node_pgid_;
  }
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  int node = -1;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const pid_t group = ProcessGroup(e->d_name);
    if (group <= 0) continue;
    for (size_t n = 0; n < groups.size() && node < 0; ++n)
      if (groups[n] == group && HoldsSocket(e->d_name, inode)) node = static_cast<int>(n);
    if (node >= 0) break;
  }
  closedir(proc);
  return node;
}

bool LinkRelays::Accept(const Listener& l) {
  int a = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (a < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED;
  int b = ConnectTo(l.target_port);
  if (b < 0) {
    close(a);  // the node is down: its peer sees the connection end, as good as refused
    return true;
  }
  Pipe pipe;
  pipe.a = a;
  pipe.b = b;
  pipe.from = NodeOfConnection(a, l.port);
  pipe.to = l.to;
  pipe.relay_port = l.port;
  pipes_.push_back(std::move(pipe));
  return true;
}

// The loop: poll what has something to do, serve what is ready, drop what
// has finished, until Stop.
void LinkRelays::Loop() {
  PollSet set;
  bool accepting = true;  // false for kAcceptPauseMs after an accept failed
  while (!stop_) {
    const int wait_ms = FillPollSet(accepting, &set);
    const int polled = poll(set.fds.data(), set.fds.size(), wait_ms);
    accepting = true;
    if (polled < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (size_t k = 0; k < set.fds.size(); ++k) {
      const short ev = set.fds[k].revents;
      if (ev == 0) continue;
      auto [kind, i] = set.who[k];
      switch (kind) {
        case PollSet::kWake:
          OnWake();
          break;
        case PollSet::kListener:
          accepting = Accept(listeners_[i]) && accepting;
          break;
        case PollSet::kSideA:
        case PollSet::kSideB:
          ServeSide(pipes_[i], kind == PollSet::kSideA, ev);
          break;
      }
    }
    DropFinishedPipes();
  }
}

// Fills `set` with what to wait for; returns poll's timeout: the accept
// pause, or when the first delayed bytes are due (-1: none).
int LinkRelays::FillPollSet(bool accepting, PollSet* set) {
  set->fds.clear();
  set->who.clear();
  set->fds.push_back({wake_[0], POLLIN, 0});
  set->who.emplace_back(PollSet::kWake, 0);
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; accepting && pipes_.size() < kMaxPipes && i < listeners_.size(); ++i) {
    if (isolated_[static_cast<size_t>(listeners_[i].to)]) continue;  // connects wait in the backlog
    set->fds.push_back({listeners_[i].fd, POLLIN, 0});
    set->who.emplace_back(PollSet::kListener, i);
  }
  const int64_t now = NowMs();
  int wait_ms = accepting ? -1 : kAcceptPauseMs;
  for (size_t i = 0; i < pipes_.size(); ++i) {
    Pipe& p = pipes_[i];
    if (Cut(p.from, p.to)) continue;        // bytes wait in the kernel
    for (Flow* f : {&p.a_to_b, &p.b_to_a})  // wake when delayed bytes are due
      if (f->Ready(now) < f->bytes.size()) {
        const int due = static_cast<int>(std::max<int64_t>(f->delayed.front().first - now, 1));
        wait_ms = wait_ms < 0 ? due : std::min(wait_ms, due);
      }
    short a = 0, b = 0;
    if (!p.a_eof && p.a_to_b.bytes.size() < kMaxBuffered) a |= POLLIN;
    if (p.b_to_a.Ready(now) > 0) a |= POLLOUT;
    if (!p.b_eof && p.b_to_a.bytes.size() < kMaxBuffered) b |= POLLIN;
    if (p.a_to_b.Ready(now) > 0) b |= POLLOUT;
    // A side with nothing to do is left out (poll ignores a negative fd):
    // a hung-up side would otherwise wake the loop for ever.
    set->fds.push_back({a != 0 ? p.a : -1, a, 0});
    set->who.emplace_back(PollSet::kSideA, i);
    set->fds.push_back({b != 0 ? p.b : -1, b, 0});
    set->who.emplace_back(PollSet::kSideB, i);
  }
  return wait_ms;
}

// The self-pipe woke the loop: a partition begins or ends. Names the
// connections not known as a node's when they were accepted (a restarted
// node's, opened before its new process group was known).
void LinkRelays::OnWake() {
  char drain[64];
  while (read(wake_[0], drain, sizeof(drain)) > 0) {
  }
  for (Pipe& p : pipes_)
    if (p.from < 0 && !p.dead) p.from = NodeOfConnection(p.a, p.relay_port);
}

// Poll events `ev` on one side of `p`: reads into that side's flow (delayed
// when the link is slow), writes what the other side's flow has ready.
void LinkRelays::ServeSide(Pipe& p, bool side_a, short ev) {
  const int fd = side_a ? p.a : p.b;
  Flow& in = side_a ? p.a_to_b : p.b_to_a;
  Flow& out = side_a ? p.b_to_a : p.a_to_b;
  bool& eof = side_a ? p.a_eof : p.b_eof;
  if ((ev & POLLIN) || ((ev & (POLLHUP | POLLERR)) && !eof)) {
    const size_t before = in.bytes.size();
    if (!ReadInto(fd, &in.bytes, &eof)) p.dead = true;
    int delay_ms;
    {
      std::lock_guard<std::mutex> lock(mu_);
      delay_ms = DelayMs(p.from, p.to);
    }
    if (delay_ms > 0 || !in.delayed.empty()) in.Delay(in.bytes.size() - before, NowMs() + delay_ms);
  }
  if ((ev & POLLOUT) && !WriteFrom(fd, &out.bytes, out.Ready(NowMs()))) p.dead = true;
  if ((ev & POLLERR) && !(ev & POLLIN)) p.dead = true;
}

// Forwards EOFs whose data has gone through; drops finished or broken
// connections (closing one end closes the other: a node that exits ends
// its peers' connections through the relay too).
void LinkRelays::DropFinishedPipes() {
  for (Pipe& p : pipes_) {
    if (p.a_eof && p.a_to_b.bytes.empty()) shutdown(p.b, SHUT_WR);
    if (p.b_eof && p.b_to_a.bytes.empty()) shutdown(p.a, SHUT_WR);
    if (p.a_eof && p.b_eof && p.a_to_b.bytes.empty() && p.b_to_a.bytes.empty()) p.dead = true;
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

}  // namespace dualswarm::workers
