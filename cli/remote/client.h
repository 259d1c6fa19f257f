// The `dualswarm` commands that talk to a coordinator (spec, target, run,
// finding, campaign) share this module: their argument parsing (positional arguments
// and repeated flags on top of cli/flags.h), the connection settings
// (--coordinator / DUALSWARM_ADDR, --token / DUALSWARM_TOKEN, --tls-ca), a
// gRPC channel with per-call contexts (bearer token, 30 s deadline on unary
// calls), one-line error messages with the exit code a script can act on,
// and the small proto <-> text helpers the tables use (enum names as the
// lower-case words the rest of Dualswarm uses, timestamps, JSON).
#ifndef DUALSWARM_CLI_REMOTE_CLIENT_H_
#define DUALSWARM_CLI_REMOTE_CLIENT_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/message.h>
#include <google/protobuf/timestamp.pb.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/flags.h"
#include "proto/names/wire_names.h"

namespace dualswarm::cli::remote {

// Exit codes of the remote commands (kExitOk/kExitRejected/kExitBadInput are
// in cli/commands.h): 0 ok; 1 the watched run failed (it has findings);
// 2 bad input or a request the coordinator refused (INVALID_ARGUMENT,
// NOT_FOUND, ALREADY_EXISTS, ...); 3 the watched run was cancelled or ended
// in error; 4 the coordinator could not be reached or refused the caller
// (UNAVAILABLE, DEADLINE_EXCEEDED, UNAUTHENTICATED, PERMISSION_DENIED).
inline constexpr int kExitRunNotPassed = 3;
inline constexpr int kExitCoordinator = 4;

inline constexpr char kDefaultAddress[] = "127.0.0.1:7420";
// Longer than the coordinator's own give-up on a frozen database with its
// default flags (24.75 s at most, services/coordinator/store/store.h
// kDefaultStatementTimeoutMs), so a hung database reaches the user as
// UNAVAILABLE from the coordinator, not as this deadline.
inline constexpr std::chrono::seconds kUnaryDeadline{30};

// The help paragraph every remote command prints under its own.
extern const char kConnectionHelp[];

struct ParsedArgs {
  FlagMap flags;                                        // last value of each flag given
  std::map<std::string, std::vector<std::string>> all;  // every value of each valued flag, in order
  std::vector<std::string> positional;                  // arguments that are not flags, in order
};

// Parses ARGS like ParseFlags (cli/flags.h), but allows positional arguments
// anywhere, keeps repeated flags, and adds the connection flags
// (--coordinator, --token, --tls-ca) to `with_value`. A lone "--" ends the
// flags.
bool ParseRemoteArgs(const std::vector<std::string>& args, std::vector<std::string> with_value,
                     const std::vector<std::string>& bool_flags, ParsedArgs* out, std::string* err);

// A connection to the coordinator.
class Client {
 public:
  // Settings from the flags, then the environment, then the defaults:
  // --coordinator, DUALSWARM_ADDR, 127.0.0.1:7420; --token, DUALSWARM_TOKEN,
  // none; --tls-ca FILE: TLS with FILE as the root CA (plaintext without).
  // Fails (INVALID_ARGUMENT) for an unreadable CA file or an empty address.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const FlagMap& flags);

  // A context with the bearer token and the unary deadline.
  std::unique_ptr<grpc::ClientContext> Unary() const;
  // A context with the bearer token and no deadline (server streams).
  std::unique_ptr<grpc::ClientContext> Streaming() const;

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  const std::string& address() const { return address_; }

  // Prints "dualswarm: coordinator ADDR: CODE: message" (with a hint for
  // connection and token problems) to stderr; returns ExitCodeFor(code).
  int Fail(const grpc::Status& status) const;

 private:
  std::string address_;
  std::string token_;
  std::shared_ptr<grpc::Channel> channel_;
};

// The exit code for a failed call (see above).
int ExitCodeFor(grpc::StatusCode code);

// Runs `call` (a lambda taking a ClientContext*) and, when it fails, prints
// the error and stores the exit code in *exit_code. Returns whether it worked.
template <typename Call>
bool CallOk(const Client& client, Call&& call, int* exit_code) {
  auto ctx = client.Unary();
  grpc::Status st = call(ctx.get());
  if (st.ok()) return true;
  *exit_code = client.Fail(st);
  return false;
}

// The protobuf JSON mapping of `m` on one line (lowerCamelCase names, enums
// by name, fields with default values included).
std::string ToJson(const google::protobuf::Message& m);

// Enum values as Dualswarm writes them elsewhere (RUN_STATE_PASSED ->
// "passed"; proto/names/wire_names.h, shared with the coordinator and the
// worker).
using wire::EnumChoices;
using wire::EnumText;
using wire::ParseEnumText;

// "2024-05-01 12:00:03 UTC", or "-" for an unset timestamp.
std::string FormatTime(const google::protobuf::Timestamp& ts);
bool IsSet(const google::protobuf::Timestamp& ts);
// Seconds since the Unix epoch, with fractions.
double Seconds(const google::protobuf::Timestamp& ts);

// The first line of `text`, cut to `max` characters ("..." marks a cut).
std::string FirstLine(absl::string_view text, size_t max);

// Parses a positive 64-bit id ("run show 12"); false otherwise.
bool ParseId(absl::string_view text, int64_t* id);

// A table printed with columns padded to their widest cell; the last column
// is not padded.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size() - 1; }
  std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace dualswarm::cli::remote

#endif  // DUALSWARM_CLI_REMOTE_CLIENT_H_
