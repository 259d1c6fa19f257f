// See sut_net.h.
#include "sut_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace dsut {

namespace {
uint64_t g_poll_round = 0;  // the loop's wakeups (one thread: the loop's)
}  // namespace

uint64_t PollRound() { return g_poll_round; }
namespace {

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int) {
  int saved = errno;
  char b = 1;
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &b, 1);
  errno = saved;
}

bool SetNonBlocking(int fd) {
  int fl = fcntl(fd, F_GETFL, 0);
  return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

[[noreturn]] void Usage(const char* help, const std::string& msg) {
  std::fprintf(stderr, "error: %s\n\n%s", msg.c_str(), help);
  std::exit(2);
}

bool ParseInt(const std::string& s, long lo, long hi, int* out) {
  if (s.empty() || s.size() > 10) return false;
  long v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  if (v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

// Output beyond this stops reading from a connection until it drains, so a
// client that pipelines without reading cannot grow our memory unboundedly.
int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr size_t kMaxPendingOut = 8u << 20;
constexpr size_t kReadChunk = 64u << 10;
constexpr size_t kMaxReadPerEvent = 1u << 20;

}  // namespace

Options ParseOptionsOrExit(int argc, char** argv, const char* help, int max_mutant) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help, stdout);
      std::exit(0);
    }
    std::string name = a, value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (name != "--port" && name != "--dir" && name != "--mutant" && name != "--node" && name != "--peers" &&
        name != "--peer-port")
      Usage(help, "unknown argument '" + a + "'");
    if (!has_value) {
      if (i + 1 >= argc) Usage(help, name + " needs a value");
      value = argv[++i];
    }
    if (name == "--port") {
      if (!ParseInt(value, 0, 65535, &o.port)) Usage(help, "--port wants 0..65535, got '" + value + "'");
    } else if (name == "--node") {
      if (!ParseInt(value, 0, 63, &o.node)) Usage(help, "--node wants 0..63, got '" + value + "'");
    } else if (name == "--peer-port") {
      if (!ParseInt(value, 0, 65535, &o.peer_port)) Usage(help, "--peer-port wants 0..65535, got '" + value + "'");
    } else if (name == "--peers") {
      o.peers = value;
    } else if (name == "--dir") {
      if (value.empty()) Usage(help, "--dir wants a directory");
      o.dir = value;
    } else {
      if (!ParseInt(value, 0, max_mutant, &o.mutant))
        Usage(help, "--mutant wants 0.." + std::to_string(max_mutant) + ", got '" + value + "'");
    }
  }
  if (!o.dir.empty()) {
    struct stat st;
    if (stat(o.dir.c_str(), &st) != 0) {
      if (mkdir(o.dir.c_str(), 0700) != 0) {
        std::fprintf(stderr, "error: cannot create --dir %s: %s\n", o.dir.c_str(), std::strerror(errno));
        std::exit(2);
      }
    } else if (!S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "error: --dir %s is not a directory\n", o.dir.c_str());
      std::exit(2);
    }
  }
  return o;
}

int Serve(const Options& opts, const char* name, Handler& handler) {
  signal(SIGPIPE, SIG_IGN);
  if (pipe(g_signal_pipe) != 0 || !SetNonBlocking(g_signal_pipe[0]) || !SetNonBlocking(g_signal_pipe[1])) {
    std::fprintf(stderr, "%s: pipe: %s\n", name, std::strerror(errno));
    return 1;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) {
    std::fprintf(stderr, "%s: socket: %s\n", name, std::strerror(errno));
    return 1;
  }
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(opts.port));
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "%s: bind 127.0.0.1:%d: %s\n", name, opts.port, std::strerror(errno));
    return 1;
  }
  if (listen(lfd, 512) != 0 || !SetNonBlocking(lfd)) {
    std::fprintf(stderr, "%s: listen: %s\n", name, std::strerror(errno));
    return 1;
  }
  socklen_t alen = sizeof addr;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &alen);
  std::printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
  std::fflush(stdout);

  std::map<uint64_t, std::unique_ptr<Conn>> conns;  // ordered: fair, stable
  uint64_t next_id = 1;
  using Clock = std::chrono::steady_clock;
  Clock::time_point accept_paused_until{};
  std::vector<char> buf(kReadChunk);

  auto close_conn = [&](uint64_t id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    handler.OnClose(*it->second);
    close(it->second->fd);
    conns.erase(it);
  };
  // Writes what it can; returns false when the connection must be dropped.
  auto flush = [&](Conn& c) {
    while (c.out_pos < c.out.size()) {
      ssize_t n = send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_pos += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {
        return false;
      }
    }
    if (c.out_pos == c.out.size()) {
      c.out.clear();
      c.out_pos = 0;
    } else if (c.out_pos > (1u << 20)) {
      c.out.erase(0, c.out_pos);
      c.out_pos = 0;
    }
    return true;
  };
  auto pending_out = [](const Conn& c) { return c.out.size() - c.out_pos; };

  std::vector<pollfd> pfds;
  std::vector<uint64_t> ids;
  bool stop = false;
  while (!stop) {
    pfds.clear();
    ids.clear();
    pfds.push_back({g_signal_pipe[0], POLLIN, 0});
    bool accepting = Clock::now() >= accept_paused_until;
    pfds.push_back({lfd, static_cast<short>(accepting ? POLLIN : 0), 0});
    bool any_lingering = false;
    for (auto& [id, c] : conns) {
      short ev = 0;
      if (c->lingering) any_lingering = true;
      if (!c->peer_eof && (c->lingering || (!c->close_after_flush && pending_out(*c) < kMaxPendingOut))) ev |= POLLIN;
      if (pending_out(*c) > 0) ev |= POLLOUT;
      pfds.push_back({c->fd, ev, 0});
      ids.push_back(id);
    }
    int rc = poll(pfds.data(), pfds.size(), any_lingering ? 100 : accepting ? -1 : 50);
    ++g_poll_round;
    if (rc < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "%s: poll: %s\n", name, std::strerror(errno));
      break;
    }
    if (pfds[0].revents) {
      stop = true;
      break;
    }
    if (pfds[1].revents & POLLIN) {
      for (;;) {
        int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            accept_paused_until = Clock::now() + std::chrono::milliseconds(50);
          break;  // EAGAIN, or a transient error (ECONNABORTED, ...)
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::make_unique<Conn>();
        c->id = next_id++;
        c->fd = fd;
        Conn& ref = *c;
        conns.emplace(ref.id, std::move(c));
        handler.OnOpen(ref);
      }
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      short re = pfds[i + 2].revents;
      if (!re) continue;
      auto it = conns.find(ids[i]);
      if (it == conns.end()) continue;
      Conn& c = *it->second;
      bool drop = false;
      if (re & (POLLIN | POLLHUP | POLLERR)) {
        size_t got = 0;
        bool new_input = false;
        while (got < kMaxReadPerEvent && !c.peer_eof) {
          ssize_t n = recv(c.fd, buf.data(), buf.size(), 0);
          if (n > 0) {
            c.in.append(buf.data(), static_cast<size_t>(n));
            got += static_cast<size_t>(n);
            new_input = true;
          } else if (n == 0) {
            c.peer_eof = true;
            new_input = true;
          } else if (errno == EINTR) {
            continue;
          } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
          } else {
            drop = true;  // ECONNRESET and friends
            break;
          }
        }
        if (!drop && new_input) {
          if (c.close_after_flush)
            c.in.clear();  // no more requests after a fatal error
          else
            handler.OnInput(c);
        }
      }
      if (!drop && pending_out(c) > 0 && !flush(c)) drop = true;
      if (!drop && pending_out(c) == 0) {
        if (c.peer_eof) {
          drop = true;  // everything said, and the peer is done
        } else if (c.close_after_flush && !c.lingering) {
          shutdown(c.fd, SHUT_WR);
          c.lingering = true;
          c.linger_deadline_ms = NowMs() + 2000;
        }
      }
      if (drop) close_conn(ids[i]);
    }
    if (any_lingering) {
      int64_t now = NowMs();
      std::vector<uint64_t> expired;
      for (auto& [id, c] : conns)
        if (c->lingering && now >= c->linger_deadline_ms) expired.push_back(id);
      for (uint64_t id : expired) close_conn(id);
    }
  }
  while (!conns.empty()) close_conn(conns.begin()->first);
  close(lfd);
  return 0;
}

bool SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace dsut
