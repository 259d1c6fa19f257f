// `dualswarm spec push|list|show`: specs stored on the coordinator
// (SpecService).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/remote/client.h"
#include "cli/remote/resources.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "engine/lang/spec.h"

namespace dualswarm::cli {
namespace remote {

bool PushSpecFile(const Client& client, const std::string& file, const std::string& expect_name,
                  v1::CreateSpecResponse* out, int* exit_code) {
  auto source = lang::ReadFileToString(file);
  if (!source.ok()) {
    *exit_code = BadInput(std::string(source.status().message()));
    return false;
  }
  auto stub = v1::SpecService::NewStub(client.channel());
  if (!expect_name.empty()) {
    v1::ValidateSpecRequest vreq;
    vreq.set_file_name(file);
    vreq.set_source(*source);
    v1::ValidateSpecResponse vresp;
    if (!CallOk(
            client, [&](grpc::ClientContext* ctx) { return stub->Validate(ctx, vreq, &vresp); }, exit_code))
      return false;
    if (vresp.valid() && vresp.name() != expect_name) {
      *exit_code = BadInput(absl::StrCat(file, " declares spec '", vresp.name(), "', not '", expect_name,
                                         "' (--name); nothing was pushed"));
      return false;
    }
  }
  v1::CreateSpecRequest req;
  req.set_file_name(file);
  req.set_source(*source);
  return CallOk(
      client, [&](grpc::ClientContext* ctx) { return stub->Create(ctx, req, out); }, exit_code);
}

}  // namespace remote

namespace {

using remote::Client;
using remote::ParsedArgs;

const char kSpecHelp[] =
    "usage: dualswarm spec push FILE [--name N] [--json]\n"
    "       dualswarm spec list [--name N] [--limit N] [--json]\n"
    "       dualswarm spec show HASH|--name N [--source] [--json]\n"
    "\n"
    "Specs stored on the coordinator. Versions are content-addressed: a version's\n"
    "identity is the SHA-256 of its source, and pushing the same source twice stores it\n"
    "once.\n"
    "\n"
    "  push FILE       upload FILE; prints the hash, the spec's name and whether this\n"
    "                  version is new. A spec that does not load is refused: every error\n"
    "                  is printed as file:line:column and the exit code is 2.\n"
    "    --name N      refuse to push unless FILE declares `spec N`\n"
    "  list            stored versions, newest first\n"
    "    --name N      only versions of spec N\n"
    "    --limit N     at most N versions (default 50)\n"
    "  show HASH       one version: name, file, choice sites, upload time\n"
    "    --name N      the newest version of spec N instead of HASH\n"
    "    --source      print the source only (e.g. to save it to a file)\n"
    "  --json          print the protobuf JSON mapping of the response\n"
    "\n";

int Usage(const std::string& err) { return BadInput(absl::StrCat(err, "\n\n", kSpecHelp, remote::kConnectionHelp)); }

int Push(const ParsedArgs& a) {
  if (a.positional.size() != 1) return Usage("spec push needs exactly one FILE");
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  v1::CreateSpecResponse resp;
  int code = 0;
  std::string name = a.flags.count("name") ? a.flags.at("name") : "";
  if (!remote::PushSpecFile(**client, a.positional[0], name, &resp, &code)) return code;
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(resp).c_str());
  } else {
    std::printf("%s\nspec %s, %s (%d choice sites)\n", resp.spec().hash().c_str(), resp.spec().name().c_str(),
                resp.created() ? "new version stored" : "this version was already stored", resp.spec().choice_sites());
  }
  return kExitOk;
}

int List(const ParsedArgs& a) {
  if (!a.positional.empty()) return Usage(absl::StrCat("unexpected argument '", a.positional[0], "'"));
  int limit = 50;
  if (a.flags.count("limit") && (!absl::SimpleAtoi(a.flags.at("limit"), &limit) || limit < 1 || limit > 100000))
    return BadInput("--limit must be between 1 and 100000");
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  auto stub = v1::SpecService::NewStub((*client)->channel());
  v1::ListSpecsRequest req;
  if (a.flags.count("name")) req.set_name(a.flags.at("name"));
  v1::ListSpecsResponse all;
  int code = 0;
  while (all.specs_size() < limit) {
    req.set_page_size(std::min(limit - all.specs_size(), 500));
    v1::ListSpecsResponse page;
    if (!remote::CallOk(
            **client, [&](grpc::ClientContext* ctx) { return stub->List(ctx, req, &page); }, &code))
      return code;
    for (auto& s : *page.mutable_specs()) *all.add_specs() = std::move(s);
    if (page.next_page_token().empty()) break;
    req.set_page_token(page.next_page_token());
  }
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(all).c_str());
    return kExitOk;
  }
  remote::Table t({"HASH", "NAME", "FILE", "SITES", "CREATED"});
  for (const auto& s : all.specs())
    t.Add({s.hash(), s.name(), s.file_name(), absl::StrCat(s.choice_sites()), remote::FormatTime(s.created_at())});
  if (t.size() == 0) {
    std::printf("no specs%s\n", req.name().empty() ? "" : absl::StrCat(" named '", req.name(), "'").c_str());
  } else {
    std::fputs(t.Render().c_str(), stdout);
  }
  return kExitOk;
}

int Show(const ParsedArgs& a) {
  bool by_name = a.flags.count("name") > 0;
  if (a.positional.size() != (by_name ? 0u : 1u)) return Usage("spec show needs exactly one of HASH or --name N");
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  auto stub = v1::SpecService::NewStub((*client)->channel());
  v1::GetSpecRequest req;
  if (by_name) {
    req.set_name(a.flags.at("name"));
  } else {
    req.set_hash(a.positional[0]);
  }
  v1::Spec spec;
  int code = 0;
  if (!remote::CallOk(
          **client, [&](grpc::ClientContext* ctx) { return stub->Get(ctx, req, &spec); }, &code))
    return code;
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(spec).c_str());
  } else if (a.flags.count("source")) {
    std::fwrite(spec.source().data(), 1, spec.source().size(), stdout);
  } else {
    size_t lines = std::count(spec.source().begin(), spec.source().end(), '\n');
    std::printf(
        "spec %s\n  hash          %s\n  file          %s\n  choice sites  %d\n  created       %s\n"
        "  source        %zu lines, %zu bytes (--source prints it)\n",
        spec.name().c_str(), spec.hash().c_str(), spec.file_name().c_str(), spec.choice_sites(),
        remote::FormatTime(spec.created_at()).c_str(), lines, spec.source().size());
  }
  return kExitOk;
}

}  // namespace

int SpecCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kSpecHelp, args.empty() ? stderr : stdout);
    std::fputs(remote::kConnectionHelp, args.empty() ? stderr : stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    std::fputs(kSpecHelp, stdout);
    std::fputs(remote::kConnectionHelp, stdout);
    return kExitOk;
  }
  ParsedArgs a;
  std::string err;
  if (sub == "push") {
    if (!remote::ParseRemoteArgs(rest, {"name"}, {"json"}, &a, &err)) return Usage(err);
    return Push(a);
  }
  if (sub == "list") {
    if (!remote::ParseRemoteArgs(rest, {"name", "limit"}, {"json"}, &a, &err)) return Usage(err);
    return List(a);
  }
  if (sub == "show") {
    if (!remote::ParseRemoteArgs(rest, {"name"}, {"json", "source"}, &a, &err)) return Usage(err);
    return Show(a);
  }
  return Usage(absl::StrCat("unknown spec command '", sub, "'"));
}

}  // namespace dualswarm::cli
