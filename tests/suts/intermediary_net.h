// intermediary_net: what the reference intermediaries (ds-ref-relay,
// ds-ref-proxy, ds-ref-cache) share: a thread-per-client server loop on
// 127.0.0.1, a client connection's answers written in request order while
// its requests are worked on concurrently, and a pool of connections to
// the origin, borrowed one request at a time and reused across clients.
//
// Deliberately standalone: plain C++20 and POSIX, no engine/ headers.
#ifndef DUALSWARM_TESTS_SUTS_INTERMEDIARY_NET_H_
#define DUALSWARM_TESTS_SUTS_INTERMEDIARY_NET_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace dsut {

// An intermediary's flags: --port N, --origin-port N (required),
// --origin-connections N (1-64, default 2), --origin-timeout-ms N (how
// long ds-ref-proxy waits for an origin's answer before its 504; 0, the
// default: for ever; the relay and the cache wait for ever),
// --mutant N (0-max_mutant), --dir D (ignored: the launcher's working
// directory), --help.
struct IntermediaryFlags {
  int port = 0;
  int origin_port = 0;
  int origin_connections = 2;
  int origin_timeout_ms = 0;
  int mutant = 0;
};
// Prints `help` for --help (exit 0), and `name`: a message plus `help` for
// a bad flag (exit 2); returns only on success.
IntermediaryFlags ParseIntermediaryFlagsOrExit(int argc, char** argv, const char* name, const char* help,
                                               int max_mutant);

// Listens on 127.0.0.1:port (0 = any), prints "listening on
// 127.0.0.1:PORT" (flushed) and serves each accepted connection on a
// thread of its own with serve_client(fd), which closes fd. Returns only
// when it cannot listen (exit status 1, after saying why as `name`).
int ServeThreadPerClient(int port, const char* name, std::function<void(int fd)> serve_client);

// What a client gets for one request: bytes, or the end of its connection.
struct ClientAnswer {
  std::string bytes;
  bool hang_up = false;  // shut the connection down instead (after the answers before it)
};

// Requests one client may have in the works at once (one thread each);
// reading waits while that many are.
inline constexpr int kMaxJobsPerClient = 64;

// Serves one client connection and closes fd: next_job() reads the next
// request and returns the job that answers it (an empty function at the
// connection's end); each job runs on a thread of its own, and the answers
// are written in request order (in the order the jobs finish when
// `in_finish_order`, a relay mutant). Jobs may outlive the connection.
void ServeInRequestOrder(int fd, const std::function<std::function<ClientAnswer()>()>& next_job,
                         bool in_finish_order = false);

// Connections to the origin at 127.0.0.1:port, at most `most` open at
// once, opened lazily; each carries one request at a time.
class OriginPool {
 public:
  OriginPool(int port, int most) : port_(port), most_(most) {}
  // A connection to the origin (-1 when it cannot be reached); waits while
  // `most` are borrowed.
  int Borrow();
  // Gives a connection back (-1: it broke, and the caller closed it).
  void Release(int fd);

 private:
  const int port_;
  const int most_;
  std::mutex mu_;  // guards idle_ and open_
  std::condition_variable cv_;
  std::vector<int> idle_;
  int open_ = 0;  // idle or borrowed
};

}  // namespace dsut

#endif  // DUALSWARM_TESTS_SUTS_INTERMEDIARY_NET_H_
