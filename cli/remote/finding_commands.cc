// `dualswarm finding list|show`: findings (counterexamples grouped by
// signature) on the coordinator (FindingService). `finding show` draws the
// smallest counterexample as the same terminal sequence diagram as
// `dualswarm test`, and --save writes its document for `dualswarm replay`.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cli/commands.h"
#include "cli/remote/client.h"
#include "cli/remote/resources.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "engine/harness/counterexample.h"

namespace dualswarm::cli {
namespace {

using remote::Client;
using remote::ParsedArgs;

const char kFindingHelp[] =
    "usage: dualswarm finding list [--run ID] [--spec HASH] [--target NAME|ID] [--limit N] [--json]\n"
    "       dualswarm finding show ID [--save FILE] [--json]\n"
    "\n"
    "A finding groups the counterexamples of failing jobs with the same signature\n"
    "against the same spec version and target: one bug, seen possibly many times.\n"
    "\n"
    "  list               findings, most recently seen first: id, kind, count, signature,\n"
    "                     reason\n"
    "    --run ID         only findings with a counterexample from run ID\n"
    "    --spec HASH      only findings of this spec version\n"
    "    --target NAME|ID only findings against this target\n"
    "    --limit N        at most N findings (default 50)\n"
    "  show ID            the finding and its smallest counterexample, drawn as a sequence\n"
    "                     diagram (one lane per connection, the rejected message marked)\n"
    "    --save FILE      write the smallest counterexample's document to FILE; rerun it\n"
    "                     with `dualswarm replay FILE --launch CMD` (add --spec FILE when the\n"
    "                     spec file recorded in it is not on this machine: `dualswarm spec\n"
    "                     show HASH --source > FILE` fetches it)\n"
    "  --json             print the protobuf JSON mapping of the response\n"
    "\n";

int Usage(const std::string& err) { return BadInput(absl::StrCat(err, "\n\n", kFindingHelp, remote::kConnectionHelp)); }

int List(const ParsedArgs& a) {
  const FlagMap& f = a.flags;
  if (!a.positional.empty()) return Usage(absl::StrCat("unexpected argument '", a.positional[0], "'"));
  v1::ListFindingsRequest req;
  if (f.count("run")) {
    int64_t id;
    if (!remote::ParseId(f.at("run"), &id)) return BadInput("--run needs a run ID (a positive integer)");
    req.set_run_id(id);
  }
  if (f.count("spec")) req.set_spec_hash(f.at("spec"));
  int limit = 50;
  if (f.count("limit") && (!absl::SimpleAtoi(f.at("limit"), &limit) || limit < 1 || limit > 100000))
    return BadInput("--limit must be between 1 and 100000");
  auto client = Client::Connect(f);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  int code = 0;
  if (f.count("target")) {
    int64_t id = 0;
    if (!remote::ResolveTarget(**client, f.at("target"), &id, &code)) return code;
    req.set_target_id(id);
  }
  auto stub = v1::FindingService::NewStub((*client)->channel());
  v1::ListFindingsResponse all;
  while (all.findings_size() < limit) {
    req.set_page_size(std::min(limit - all.findings_size(), 500));
    v1::ListFindingsResponse page;
    if (!remote::CallOk(
            **client, [&](grpc::ClientContext* ctx) { return stub->List(ctx, req, &page); }, &code))
      return code;
    for (auto& x : *page.mutable_findings()) *all.add_findings() = std::move(x);
    if (page.next_page_token().empty()) break;
    req.set_page_token(page.next_page_token());
  }
  if (f.count("json")) {
    std::printf("%s\n", remote::ToJson(all).c_str());
    return kExitOk;
  }
  if (all.findings().empty()) {
    std::printf("no findings\n");
    return kExitOk;
  }
  remote::Table t({"ID", "KIND", "COUNT", "SIGNATURE", "REASON"});
  for (const auto& x : all.findings())
    t.Add({absl::StrCat(x.id()), remote::EnumText(x.kind()), absl::StrCat(x.count()), x.signature(),
           remote::FirstLine(x.reason(), 100)});
  std::fputs(t.Render().c_str(), stdout);
  return kExitOk;
}

// The fields of a counterexample that has no document (reported before
// document_json existed, or a document this CLI cannot read).
void PrintFields(const v1::Counterexample& c) {
  std::printf("  kind       %s\n  reason     %s\n", remote::EnumText(c.kind()).c_str(), c.reason().c_str());
  if (!c.diff().empty()) std::printf("  diff       %s\n", c.diff().c_str());
  std::printf("  input      %s\n", c.input_json().empty() ? "-" : c.input_json().c_str());
  if (!c.trace_json().empty())
    std::printf("  trace (JSON lines, docs/trace-format.md):\n%s%s", c.trace_json().c_str(),
                absl::EndsWith(c.trace_json(), "\n") ? "" : "\n");
}

int Show(const ParsedArgs& a) {
  int64_t id = 0;
  if (a.positional.size() != 1 || !remote::ParseId(a.positional[0], &id))
    return Usage("finding show needs one finding ID (a positive integer)");
  auto client = Client::Connect(a.flags);
  if (!client.ok()) return BadInput(std::string(client.status().message()));
  auto stub = v1::FindingService::NewStub((*client)->channel());
  v1::GetFindingRequest req;
  req.set_id(id);
  v1::Finding finding;
  int code = 0;
  if (!remote::CallOk(
          **client, [&](grpc::ClientContext* ctx) { return stub->Get(ctx, req, &finding); }, &code))
    return code;
  const v1::Counterexample* smallest = nullptr;
  for (const auto& c : finding.counterexamples())
    if (c.id() == finding.smallest_counterexample_id()) smallest = &c;
  if (smallest == nullptr && !finding.counterexamples().empty()) smallest = &finding.counterexamples(0);

  if (a.flags.count("save")) {
    const std::string& file = a.flags.at("save");
    if (smallest == nullptr) return BadInput(absl::StrCat("finding ", id, " has no counterexample to save"));
    if (smallest->document_json().empty())
      return BadInput(absl::StrCat("counterexample ", smallest->id(),
                                   " has no document (it was reported before documents were kept); nothing saved"));
    FILE* out = std::fopen(file.c_str(), "w");
    if (out == nullptr) return BadInput(absl::StrCat("cannot write ", file));
    const std::string& doc = smallest->document_json();
    bool ok = std::fwrite(doc.data(), 1, doc.size(), out) == doc.size();
    if (!absl::EndsWith(doc, "\n")) ok = ok && std::fputc('\n', out) != EOF;
    ok = std::fclose(out) == 0 && ok;
    if (!ok) return BadInput(absl::StrCat("cannot write ", file));
  }
  if (a.flags.count("json")) {
    std::printf("%s\n", remote::ToJson(finding).c_str());
    return kExitOk;
  }
  std::printf("finding %lld: %s, %lld counterexample%s (first seen %s, last seen %s)\n",
              static_cast<long long>(finding.id()), remote::EnumText(finding.kind()).c_str(),
              static_cast<long long>(finding.count()), finding.count() == 1 ? "" : "s",
              remote::FormatTime(finding.first_seen()).c_str(), remote::FormatTime(finding.last_seen()).c_str());
  std::printf("  signature  %s\n  spec       %s\n  target     %lld\n  reason     %s\n", finding.signature().c_str(),
              finding.spec_hash().c_str(), static_cast<long long>(finding.target_id()),
              remote::FirstLine(finding.reason(), 400).c_str());
  if (smallest == nullptr) return kExitOk;
  const v1::Counterexample& c = *smallest;
  std::printf(
      "\nsmallest counterexample %lld: run %lld, job %lld, seed %llu, branch order %s%s, %d request%s "
      "(%d before shrinking)\n\n",
      static_cast<long long>(c.id()), static_cast<long long>(c.run_id()), static_cast<long long>(c.job_id()),
      static_cast<unsigned long long>(c.seed()), remote::EnumText(c.branch_order()).c_str(),
      c.feature_mask().empty() ? "" : absl::StrCat(", feature mask ", c.feature_mask()).c_str(), c.size(),
      c.size() == 1 ? "" : "s", c.unshrunk_size());
  bool drawn = false;
  if (!c.document_json().empty()) {
    auto cx = harness::CounterexampleFromJson(c.document_json());
    if (cx.ok()) {
      std::fputs(harness::RenderSequenceDiagram(*cx).c_str(), stdout);
      drawn = true;
    } else {
      std::printf("(its document cannot be read: %s)\n", std::string(cx.status().message()).c_str());
    }
  } else {
    std::printf("(no document was kept for this counterexample: its fields follow)\n");
  }
  if (!drawn) PrintFields(c);
  if (finding.counterexamples_size() > 1) {
    std::printf("\nother counterexamples:");
    for (const auto& o : finding.counterexamples())
      if (&o != smallest)
        std::printf(" %lld (run %lld, %d requests)", static_cast<long long>(o.id()), static_cast<long long>(o.run_id()),
                    o.size());
    std::printf("\n");
  }
  if (a.flags.count("save")) {
    std::printf("\nsaved to %s (replay: dualswarm replay %s --launch CMD)\n", a.flags.at("save").c_str(),
                a.flags.at("save").c_str());
  } else if (!c.document_json().empty()) {
    std::printf("\nreplay: dualswarm finding show %lld --save cx.json && dualswarm replay cx.json --launch CMD\n",
                static_cast<long long>(finding.id()));
  }
  return kExitOk;
}

}  // namespace

int FindingCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kFindingHelp, args.empty() ? stderr : stdout);
    std::fputs(remote::kConnectionHelp, args.empty() ? stderr : stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    std::fputs(kFindingHelp, stdout);
    std::fputs(remote::kConnectionHelp, stdout);
    return kExitOk;
  }
  ParsedArgs a;
  std::string err;
  if (sub == "list") {
    if (!remote::ParseRemoteArgs(rest, {"run", "spec", "target", "limit"}, {"json"}, &a, &err)) return Usage(err);
    return List(a);
  }
  if (sub == "show") {
    if (!remote::ParseRemoteArgs(rest, {"save"}, {"json"}, &a, &err)) return Usage(err);
    return Show(a);
  }
  return Usage(absl::StrCat("unknown finding command '", sub, "'"));
}

}  // namespace dualswarm::cli
