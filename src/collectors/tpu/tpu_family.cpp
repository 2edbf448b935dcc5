// The tpu family's factory: one collector in a lane of its own, made only when the PCI scan of the sys
// tree (--root as everywhere) found TPU chips; without one nothing connects and libtpu is never loaded.
// The runtime-metrics service is read at RUNMON_TPU_RUNTIME_ADDRESS when set (a comma-separated list of
// IPv4 host:port, localhost read as 127.0.0.1, for tests and unusual setups; anything else makes the family
// absent, saying why), else at 127.0.0.1:<port> for every port of TPU_RUNTIME_METRICS_PORTS (one per process
// of a multi-process PyTorch/XLA workload; an entry that is not a port is left out, said once), else at
// 127.0.0.1:8431. libtpu.so is looked for as W&B looks (libtpu_sdk.hpp; its system directories only on the
// host's own root) and opened at the collector's first tick. The probe (`runmon info`) gives the chips'
// metadata and, under runmon.tpu, where libtpu was found and whether the service listens now.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/builtin.hpp"
#include "collectors/linux/parse/text.hpp"
#include "collectors/tpu/ipv4_endpoint.hpp"
#include "collectors/tpu/tpu_collector.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"RUNMON_TPU_RUNTIME_ADDRESS",
                                          "TPU_RUNTIME_METRICS_PORTS",
                                          "WANDB_LIBTPU_PATH",
                                          "TPU_LIBRARY_PATH",
                                          "LIBTPU_PATH",
                                          "HOME"};
constexpr std::string_view kDefaultAddress = "127.0.0.1:8431";

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view item =
        text::Trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

bool IsPort(std::string_view text) {
  const auto port = text::ParseU64(text);
  return port && *port >= 1 && *port <= 65535;
}

// "a.b.c.d:port" (tpu::Ipv4Endpoint's form), with "localhost" read as 127.0.0.1; nullopt for anything else.
std::optional<std::string> Ipv4Address(const std::string& address) {
  const std::string normalized = address.starts_with("localhost:")
                                     ? "127.0.0.1" + address.substr(std::string_view("localhost").size())
                                     : address;
  if (!tpu::Ipv4Endpoint(normalized)) return std::nullopt;
  return normalized;
}

struct Addresses {
  std::vector<std::string> addresses;
  std::string warning;  // a TPU_RUNTIME_METRICS_PORTS entry that is not a port (then left out)
};

// The service's addresses, or why RUNMON_TPU_RUNTIME_ADDRESS names none.
Result<Addresses> ServiceAddresses(const CollectorContext& ctx) {
  Addresses out;
  if (auto explicit_addresses = EnvironmentValue(ctx, "RUNMON_TPU_RUNTIME_ADDRESS")) {
    for (const std::string& address : SplitList(*explicit_addresses)) {
      auto ipv4 = Ipv4Address(address);
      if (!ipv4)
        return Error{fmt::format("RUNMON_TPU_RUNTIME_ADDRESS: '{}' is not an IPv4 host:port", address)};
      out.addresses.push_back(*ipv4);
    }
    if (out.addresses.empty()) return Error{"RUNMON_TPU_RUNTIME_ADDRESS names no address"};
    return out;
  }
  if (auto ports = EnvironmentValue(ctx, "TPU_RUNTIME_METRICS_PORTS")) {
    for (const std::string& port : SplitList(*ports)) {
      if (IsPort(port)) {
        out.addresses.push_back("127.0.0.1:" + port);
      } else if (out.warning.empty()) {
        out.warning = fmt::format("tpu: TPU_RUNTIME_METRICS_PORTS: '{}' is not a port, left out", port);
      }
    }
  }
  if (out.addresses.empty()) out.addresses.emplace_back(kDefaultAddress);
  return out;
}

bool OnHostRoot(const CollectorContext& ctx) {
  return ctx.paths.sys == HostPaths::System().sys;
}

FamilyStart Start(const CollectorContext& ctx) {
  tpu::TpuChips chips = tpu::ScanTpuChips(ctx.paths);
  if (chips.type == nullptr)
    return FamilyStart{.absent_reason = "no TPU chip on the PCI bus (vendor 0x1ae0)"};
  auto addresses = ServiceAddresses(ctx);
  if (!addresses) return FamilyStart{.absent_reason = addresses.error()};
  if (!addresses->warning.empty() && ctx.warn) ctx.warn(addresses->warning);
  TpuOptions options;
  options.chips = std::move(chips);
  options.addresses = std::move(addresses->addresses);
  options.make_client = [](const std::string& address) {
    return tpu::LoadRuntimeMetricsClient(address, tpu::RuntimeServiceTimeouts{});
  };
  if (auto library = tpu::FindLibtpu(ctx.environment, OnHostRoot(ctx))) {
    options.open_sdk = [library = *library] { return tpu::OpenLibtpuSdk(library); };
  }
  options.paths = ctx.paths;
  options.pid = ctx.pid;
  options.whole_tree = ctx.settings.track_process_tree;
  options.monotonic_seconds =
      ctx.clocks.monotonic_seconds ? ctx.clocks.monotonic_seconds : Clocks::System().monotonic_seconds;
  options.publish_metadata = ctx.publish_metadata;
  options.warn = ctx.warn;
  return FamilyStart::Of(MakeTpuCollector(std::move(options)));
}

Result<nlohmann::json> Probe(const CollectorContext& ctx) {
  const tpu::TpuChips chips = tpu::ScanTpuChips(ctx.paths);
  if (chips.type == nullptr) return Error{"no TPU chip on the PCI bus (vendor 0x1ae0)"};
  auto addresses = ServiceAddresses(ctx);
  if (!addresses) return Error{addresses.error()};
  nlohmann::json status = nlohmann::json::object();
  const auto library = tpu::FindLibtpu(ctx.environment, OnHostRoot(ctx));
  // A string either way: the metadata is merged as a JSON merge patch, where null would remove the key.
  status["libtpu"] = library ? library->string() : std::string("not found");
  nlohmann::json services = nlohmann::json::array();
  if (!addresses->warning.empty()) status["warning"] = addresses->warning;
  for (const std::string& address : addresses->addresses) {
    nlohmann::json service = {{"address", address}};
    auto client = tpu::LoadRuntimeMetricsClient(address, tpu::RuntimeServiceTimeouts{});
    if (client) {
      service["listening"] = (*client)->Listening();
    } else {
      service["error"] = client.error();
    }
    services.push_back(std::move(service));
  }
  status["services"] = std::move(services);
  return nlohmann::json{{"tpu", DescribeTpuChips(chips)}, {"runmon", {{"tpu", std::move(status)}}}};
}

}  // namespace

const CollectorFamily& tpu() {
  static constexpr CollectorFamily kFamily{
      .name = "tpu", .lane = "tpu", .settings = kSettings, .start = Start, .probe = Probe};
  return kFamily;
}

}  // namespace runmon::collector_families
