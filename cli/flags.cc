#include "cli/flags.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "util/file_tail.h"
#include "workers/adapters/grpc_catalog.h"

namespace dualswarm::cli {

bool ParseFlags(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                const std::vector<std::string>& bool_flags, FlagMap* out, std::string* err) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      *err = absl::StrCat("unexpected argument '", a, "'");
      return false;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    bool takes = std::find(with_value.begin(), with_value.end(), name) != with_value.end();
    bool is_bool = std::find(bool_flags.begin(), bool_flags.end(), name) != bool_flags.end();
    if (!takes && !is_bool) {
      *err = absl::StrCat("unknown option '--", name, "'");
      return false;
    }
    if (takes && !has_value) {
      if (i + 1 >= args.size()) {
        *err = absl::StrCat("option '--", name, "' needs a value");
        return false;
      }
      value = args[++i];
    }
    (*out)[name] = takes ? value : "true";
  }
  return true;
}

int BadInput(const std::string& msg) {
  std::fprintf(stderr, "dualswarm: %s\n", msg.c_str());
  return kExitBadInput;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

std::optional<int> AdapterConfigFromFlags(FlagMap& f, workers::JobOptions* o) {
  if (f.count("run-as")) {
    if (o->adapter != "fs") return BadInput("--run-as is for the fs adapter only");
    if (f["run-as"].empty()) return BadInput("--run-as needs a user name");
    o->adapter_config.fs_user = f["run-as"];
  }
  if (!f.count("descriptor-set")) {
    if (o->adapter == "grpc") return BadInput("the grpc adapter needs --descriptor-set FILE");
    return std::nullopt;
  }
  if (o->adapter != "grpc") return BadInput("--descriptor-set is for the grpc adapter only");
  auto bytes = util::ReadFileTail(f["descriptor-set"], workers::kMaxDescriptorSetBytes + 1);
  if (!bytes.ok()) return BadInput(absl::StrCat("--descriptor-set: ", bytes.status().message()));
  if (bytes->size() > workers::kMaxDescriptorSetBytes)
    return BadInput(absl::StrCat("--descriptor-set: the file exceeds ", workers::kMaxDescriptorSetBytes, " bytes"));
  o->adapter_config.descriptor_set = *std::move(bytes);
  return std::nullopt;
}

}  // namespace dualswarm::cli
