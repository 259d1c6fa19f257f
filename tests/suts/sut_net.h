// sut_net: the small single-threaded TCP server loop shared by the reference
// systems under test (ds-ref-webdav, ds-ref-kv, ds-ref-queue).
//
// The loop listens on 127.0.0.1 only, prints the readiness line
// "listening on 127.0.0.1:PORT" (flushed) once it accepts connections, and
// multiplexes every connection with poll(). A protocol plugs in a Handler:
// the loop appends received bytes to Conn::in and calls OnInput; the handler
// consumes complete messages from the front of `in` and appends its replies
// to `out`, which the loop writes back in order. SIGTERM/SIGINT end the loop
// cleanly (exit status 0).
//
// Deliberately standalone: plain C++20 and POSIX, no engine/ headers.
#ifndef DUALSWARM_TESTS_SUTS_SUT_NET_H_
#define DUALSWARM_TESTS_SUTS_SUT_NET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace dsut {

struct Options {
  int port = 0;     // 0 = pick a free port
  std::string dir;  // --dir (optional)
  int mutant = 0;   // 0 = the correct server
  // Cluster members (ds-ref-replkv): this node's number, every node's
  // peer address (host:port, in node order) and the peer port to listen
  // on (0: this node's entry of `peers`).
  int node = 0;
  std::string peers;
  int peer_port = 0;
};

// Parses --port N, --dir D, --mutant N, --node N, --peers LIST,
// --peer-port N (also --flag=value) and --help.
// Prints `help` for --help (exit 0) and a message plus usage for bad flags
// or a mutant outside [0, max_mutant] (exit 2); returns only on success.
Options ParseOptionsOrExit(int argc, char** argv, const char* help, int max_mutant);

// How many times the loop has woken from poll() so far. Requests handled
// in the same round arrived at about the same time, which a mutant may use
// to play a rare race (ds-ref-webdav 31).
uint64_t PollRound();

// One client connection.
struct Conn {
  uint64_t id = 0;  // unique for the life of the process
  int fd = -1;
  std::string in;   // received, not yet consumed by the handler
  std::string out;  // to be written (from out_pos on)
  size_t out_pos = 0;
  bool peer_eof = false;           // the peer shut down its sending side
  bool close_after_flush = false;  // close once `out` is written; stop reading
  // Loop-internal: after a server-side close the write side is shut down
  // and input is drained until EOF or the deadline (a lingering close, so
  // the peer sees the last response rather than a reset).
  bool lingering = false;
  int64_t linger_deadline_ms = 0;
};

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void OnOpen(Conn& c) {}
  // New bytes were appended to c.in, or the peer closed (c.peer_eof). Consume
  // complete messages from the front of c.in and append replies to c.out.
  virtual void OnInput(Conn& c) = 0;
  virtual void OnClose(Conn& c) {}
};

// A Handler that keeps a `State` per open connection (made on open,
// dropped on close), for protocols whose connections remember something.
template <typename State>
class PerConnectionHandler : public Handler {
 public:
  void OnOpen(Conn& c) override { states_[c.id]; }
  void OnClose(Conn& c) override { states_.erase(c.id); }

 protected:
  State& StateOf(const Conn& c) { return states_[c.id]; }

 private:
  std::unordered_map<uint64_t, State> states_;  // by Conn::id
};

// Writes all of `s` to the blocking socket `fd` (no SIGPIPE). False when
// the connection fails first.
bool SendAll(int fd, const std::string& s);

// Runs the server until SIGTERM/SIGINT. Returns the process exit status.
int Serve(const Options& opts, const char* name, Handler& handler);

}  // namespace dsut

#endif  // DUALSWARM_TESTS_SUTS_SUT_NET_H_
