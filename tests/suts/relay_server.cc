// ds-ref-relay: the reference intermediary the online tester runs against
// specs/examples/relay.dspec, playing its clients and its origin, plus
// seeded bugs ("mutants").
//
// Clients send JSON lines ({"op":..,"id":..}); the relay forwards each line
// to the origin (127.0.0.1:--origin-port, JSON lines too) and sends the
// client the origin's answer line. A client's requests are forwarded at once,
// each on an origin connection of a shared pool (at most
// --origin-connections, one request at a time on each, reused across
// clients), so a client's pipelined requests may reach the origin in any
// order; the client gets its answers in the order of its requests.
// Threads: one per client connection and one per forwarded request.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "intermediary_net.h"
#include "sut_json.h"
#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-relay --port N --origin-port N [--origin-connections N] [--mutant N] [--dir D]\n"
    "\n"
    "A JSON-lines relay used as a system under test (an intermediary): forwards\n"
    "each client line to the origin at 127.0.0.1:ORIGIN-PORT and answers the client\n"
    "with the origin's line, in request order. Listens on 127.0.0.1 only and prints\n"
    "\"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N                 TCP port for clients (0 picks a free one)\n"
    "  --origin-port N          the origin's port on 127.0.0.1\n"
    "  --origin-connections N   origin connections at most (default 2)\n"
    "  --dir D                  ignored (the launcher's working directory)\n"
    "  --mutant N   0 = correct relay; N > 0 = seeded bug N (1-4 safety, 5 liveness):\n"
    "     1  relays the origin's previous answer (server-wide) instead of this one\n"
    "     2  drops the \"id\" field of the requests it forwards\n"
    "     3  answers a client's pipelined requests in the order the origin answered\n"
    "        them, not in the order the client sent them (needs pipelining)\n"
    "     4  forwards every request twice (the second answer is dropped)\n"
    "     5  never answers a request whose id starts with \"q\" (the origin's answer\n"
    "        is dropped), nor anything after it on that client's connection\n";
constexpr int kMaxMutant = 5;
constexpr size_t kMaxLine = 1u << 20;

using Flags = dsut::IntermediaryFlags;

// Reads one line (without '\n') from a blocking socket, keeping what follows
// in *buf; false on EOF, an error, or a line longer than kMaxLine.
bool ReadLine(int fd, std::string* buf, std::string* line) {
  while (true) {
    if (size_t nl = buf->find('\n'); nl != std::string::npos) {
      *line = buf->substr(0, nl);
      buf->erase(0, nl + 1);
      return true;
    }
    if (buf->size() > kMaxLine) return false;
    char chunk[65536];
    ssize_t r = ::recv(fd, chunk, sizeof chunk, 0);
    if (r <= 0) return false;
    buf->append(chunk, static_cast<size_t>(r));
  }
}

class Relay {
 public:
  explicit Relay(const Flags& f) : flags_(f), pool_(f.origin_port, f.origin_connections) {}

  void ServeClient(int fd) {
    std::string buf, line;
    dsut::ServeInRequestOrder(
        fd,
        [&]() -> std::function<dsut::ClientAnswer()> {
          do {
            if (!ReadLine(fd, &buf, &line)) return nullptr;
            if (!line.empty() && line.back() == '\r') line.pop_back();
          } while (line.empty());
          return [this, line] { return Forward(line); };
        },
        /*in_finish_order=*/flags_.mutant == 3);  // mutant 3: answers in completion order
  }

 private:
  // The client's answer to `line`; when the origin went away, so does the
  // client (its reader sees the end of the connection).
  dsut::ClientAnswer Forward(std::string line) {
    if (flags_.mutant == 2) line = WithoutId(line);
    std::string answer;
    bool ok = Exchange1(line, &answer);
    if (ok && flags_.mutant == 4) {
      std::string dropped;
      ok = Exchange1(line, &dropped);
    }
    if (ok && flags_.mutant == 5 && IdStartsWithQ(line)) {
      // The answer is lost and so is the client: it waits for ever (the
      // thread is detached; the process exits on SIGTERM).
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (ok && flags_.mutant == 1) {
      std::lock_guard<std::mutex> lock(last_mu_);
      if (!last_answer_.empty())
        std::swap(answer, last_answer_);
      else
        last_answer_ = answer;
    }
    return dsut::ClientAnswer{answer + "\n", !ok};
  }

  // Sends one request on a pooled origin connection and reads its answer.
  bool Exchange1(const std::string& line, std::string* answer) {
    const int fd = pool_.Borrow();
    if (fd < 0) return false;
    std::string buf;
    if (!dsut::SendAll(fd, line + "\n") || !ReadLine(fd, &buf, answer) || !buf.empty()) {
      ::close(fd);
      pool_.Release(-1);
      return false;
    }
    pool_.Release(fd);
    return true;
  }

  // Whether the request's "id" is a string starting with q (mutant 5).
  static bool IdStartsWithQ(const std::string& line) {
    const size_t at = line.find("\"id\"");
    if (at == std::string::npos) return false;
    const size_t quote = line.find('"', line.find(':', at) + 1);
    return quote != std::string::npos && quote + 1 < line.size() && line[quote + 1] == 'q';
  }

  // The request line without its "id" member (mutant 2).
  static std::string WithoutId(const std::string& line) {
    std::map<std::string, dsut::Json> members;
    std::string err;
    if (!dsut::JsonParser(line).ParseObjectLine(&members, &err)) return line;
    std::string out = "{";
    for (const auto& [k, v] : members) {
      if (k == "id") continue;
      if (out.size() > 1) out += ",";
      dsut::AppendQuoted(&out, k);
      out += ":" + v.canon;
    }
    return out + "}";
  }

  const Flags flags_;
  dsut::OriginPool pool_;
  std::mutex last_mu_;  // guards last_answer_ (mutant 1)
  std::string last_answer_;
};

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = dsut::ParseIntermediaryFlagsOrExit(argc, argv, "ds-ref-relay", kHelp, kMaxMutant);
  static Relay relay(flags);  // outlives the detached threads
  return dsut::ServeThreadPerClient(flags.port, "ds-ref-relay", [](int fd) { relay.ServeClient(fd); });
}
