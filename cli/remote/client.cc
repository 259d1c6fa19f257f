#include "cli/remote/client.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/util/json_util.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cli/commands.h"
#include "engine/lang/spec.h"

namespace dualswarm::cli::remote {

const char kConnectionHelp[] =
    "connection (every remote command):\n"
    "  --coordinator HOST:PORT  the coordinator (env DUALSWARM_ADDR, default 127.0.0.1:7420)\n"
    "  --token T                bearer token (env DUALSWARM_TOKEN); make one with\n"
    "                           `dualswarm-coordinator token create --role submitter`\n"
    "  --tls-ca FILE            use TLS, trusting this PEM root CA (the coordinator serves\n"
    "                           TLS with --tls-cert/--tls-key); default: plaintext\n"
    "\n"
    "exit: 0 ok; 1 the watched run failed (findings); 2 bad input or a request the\n"
    "coordinator refused (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, ...); 3 the watched\n"
    "run was cancelled or ended in error; 4 the coordinator is unreachable or refused the\n"
    "caller (UNAVAILABLE, DEADLINE_EXCEEDED, UNAUTHENTICATED, PERMISSION_DENIED)\n";

bool ParseRemoteArgs(const std::vector<std::string>& args, std::vector<std::string> with_value,
                     const std::vector<std::string>& bool_flags, ParsedArgs* out, std::string* err) {
  with_value.insert(with_value.end(), {"coordinator", "token", "tls-ca"});
  auto takes_value = [&](const std::string& name) {
    return std::find(with_value.begin(), with_value.end(), name) != with_value.end();
  };
  std::vector<std::string> flag_args;
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_positional || a.rfind("--", 0) != 0 || a == "-") {
      out->positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    std::string name = a.substr(2);
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      std::string value = name.substr(eq + 1);
      name = name.substr(0, eq);
      if (takes_value(name)) out->all[name].push_back(value);
      flag_args.push_back(a);
    } else if (takes_value(name)) {
      if (i + 1 >= args.size()) {
        *err = absl::StrCat("option '--", name, "' needs a value");
        return false;
      }
      out->all[name].push_back(args[i + 1]);
      flag_args.push_back(a);
      flag_args.push_back(args[++i]);
    } else {
      flag_args.push_back(a);
    }
  }
  return ParseFlags(flag_args, with_value, bool_flags, &out->flags, err);
}

namespace {

std::string FromEnv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : std::string(absl::StripAsciiWhitespace(v));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const FlagMap& flags) {
  auto c = std::make_unique<Client>();
  auto flag = [&](const char* name) -> std::string {
    auto it = flags.find(name);
    return it == flags.end() ? "" : std::string(absl::StripAsciiWhitespace(it->second));
  };
  c->address_ = flag("coordinator");
  if (c->address_.empty() && !flags.count("coordinator")) c->address_ = FromEnv("DUALSWARM_ADDR");
  if (c->address_.empty() && !flags.count("coordinator")) c->address_ = kDefaultAddress;
  if (c->address_.empty()) return absl::InvalidArgumentError("--coordinator needs HOST:PORT");
  c->token_ = flags.count("token") ? flag("token") : FromEnv("DUALSWARM_TOKEN");
  for (char ch : c->token_)
    if (static_cast<unsigned char>(ch) < 0x21 || static_cast<unsigned char>(ch) > 0x7e)
      return absl::InvalidArgumentError("the token may only contain printable ASCII characters");

  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (flags.count("tls-ca")) {
    auto pem = lang::ReadFileToString(flag("tls-ca"));
    if (!pem.ok()) return absl::InvalidArgumentError(absl::StrCat("--tls-ca: ", pem.status().message()));
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = *pem;
    creds = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  // A finding with many counterexamples or a 1 MiB spec exceeds gRPC's 4 MiB default.
  args.SetMaxReceiveMessageSize(64 << 20);
  c->channel_ = grpc::CreateCustomChannel(c->address_, creds, args);
  return c;
}

std::unique_ptr<grpc::ClientContext> Client::Streaming() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!token_.empty()) ctx->AddMetadata("authorization", "Bearer " + token_);
  return ctx;
}

std::unique_ptr<grpc::ClientContext> Client::Unary() const {
  auto ctx = Streaming();
  ctx->set_deadline(std::chrono::system_clock::now() + kUnaryDeadline);
  return ctx;
}

int ExitCodeFor(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 0;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return kExitCoordinator;
    default:
      return kExitBadInput;
  }
}

int Client::Fail(const grpc::Status& status) const {
  std::string hint;
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE)
    hint =
        " (is dualswarm-coordinator running there? set --coordinator or DUALSWARM_ADDR; "
        "--tls-ca for a TLS coordinator)";
  else if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED)
    hint = token_.empty() ? " (no token given: set --token or DUALSWARM_TOKEN)" : " (check --token / DUALSWARM_TOKEN)";
  std::string msg(absl::StripTrailingAsciiWhitespace(status.error_message()));
  std::fprintf(stderr, "dualswarm: coordinator %s: %s: %s%s\n", address_.c_str(),
               wire::StatusCodeName(status.error_code()).c_str(), msg.c_str(), hint.c_str());
  return ExitCodeFor(status.error_code());
}

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions o;
  o.always_print_primitive_fields = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(m, &out, o).ok()) return "{}";
  return out;
}

bool IsSet(const google::protobuf::Timestamp& ts) { return ts.seconds() != 0 || ts.nanos() != 0; }

double Seconds(const google::protobuf::Timestamp& ts) { return static_cast<double>(ts.seconds()) + ts.nanos() / 1e9; }

std::string FormatTime(const google::protobuf::Timestamp& ts) {
  if (!IsSet(ts)) return "-";
  time_t t = static_cast<time_t>(ts.seconds());
  struct tm tm;
  if (gmtime_r(&t, &tm) == nullptr) return absl::StrCat(ts.seconds());
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string FirstLine(absl::string_view text, size_t max) {
  absl::string_view line = absl::StripTrailingAsciiWhitespace(text.substr(0, text.find('\n')));
  if (line.size() > max) return absl::StrCat(line.substr(0, max > 3 ? max - 3 : 0), "...");
  return std::string(line);
}

bool ParseId(absl::string_view text, int64_t* id) { return absl::SimpleAtoi(text, id) && *id > 0; }

std::string Table::Render() const {
  std::vector<size_t> width;
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += std::string(absl::StripTrailingAsciiWhitespace(line)) + "\n";
  }
  return out;
}

}  // namespace dualswarm::cli::remote
