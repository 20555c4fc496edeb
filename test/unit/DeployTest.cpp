//===- DeployTest.cpp - Deployment offers, checked before anything is kept ===//
#include "wire/Deploy.h"

#include <gtest/gtest.h>

using namespace twochains::rt;

namespace {

DeployHeader headerFor(const std::string &Manifest, const std::vector<DeployFile> &Files,
                       const std::vector<uint8_t> &Body) {
  return {DeployOfferMagic, uint32_t(Files.size()), 1, uint32_t(Manifest.size()), 0, Body.size()};
}

tc_status_t parse(const std::vector<DeployFile> &Files, std::string *Why = nullptr) {
  std::string Manifest = "twochains-manifest 1\n";
  std::vector<uint8_t> Body = encodeDeployOffer(Manifest, "", Files);
  DeployHeader H = headerFor(Manifest, Files, Body);
  std::string M, S, W;
  std::vector<DeployFile> Out;
  tc_status_t St = parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, W);
  if (Why)
    *Why = W;
  return St;
}

const std::string Hash(64, 'a');

TEST(DeployOffer, AcceptsAPackagesFiles) {
  std::vector<DeployFile> Files = {{"x86_64/jams/add.jam", Hash, 4096},
                                   {"x86_64/libried_tally.so", Hash, 16000}};
  std::string Manifest = "twochains-manifest 1\n", Sig = "tc-ed25519 x\n";
  std::vector<uint8_t> Body = encodeDeployOffer(Manifest, Sig, Files);
  DeployHeader H = headerFor(Manifest, Files, Body);
  H.SignatureSize = uint32_t(Sig.size());
  std::string M, S, Why;
  std::vector<DeployFile> Out;
  ASSERT_EQ(parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, Why), TC_OK) << Why;
  EXPECT_EQ(M, Manifest);
  EXPECT_EQ(S, Sig);
  ASSERT_EQ(Out.size(), 2u);
  EXPECT_EQ(Out[1].Path, "x86_64/libried_tally.so");
  EXPECT_EQ(Out[1].Size, 16000u);
}

TEST(DeployOffer, PathsStayInsideThePackage) {
  for (const char *Bad : {"../etc/passwd", "/etc/passwd", "a/../../b", "a//b", "a/./b", "a/", "",
                          "a b", "a\\b", "~/x"}) {
    std::string Why;
    EXPECT_EQ(parse({{Bad, Hash, 1}}, &Why), TC_ERR_BAD_OFFER) << Bad;
    EXPECT_NE(Why.find("path"), std::string::npos) << Why;
  }
  EXPECT_EQ(parse({{"x86_64/jams/a.b-c_d.jam", Hash, 1}}), TC_OK);
}

TEST(DeployOffer, SizesAreBoundedBeforeAnythingIsKept) {
  std::string Why;
  EXPECT_EQ(parse({{"a", Hash, MaxDeployFileSize + 1}}, &Why), TC_ERR_BAD_OFFER);
  std::vector<DeployFile> Many;
  for (int I = 0; I < 5; ++I)
    Many.push_back({"f" + std::to_string(I), Hash, MaxDeployFileSize});
  EXPECT_EQ(parse(Many, &Why), TC_ERR_BAD_OFFER) << "more than MaxDeployBytes in all";
  // A size that would wrap the total.
  EXPECT_EQ(parse({{"a", Hash, ~0ull}, {"b", Hash, 2}}), TC_ERR_BAD_OFFER);
  EXPECT_EQ(parse({{"a", Hash, 1}, {"a", Hash, 1}}, &Why), TC_ERR_BAD_OFFER) << "a path twice";
  EXPECT_EQ(parse({{"a", std::string(64, 'G'), 1}}), TC_ERR_BAD_OFFER) << "a hash not hex";
}

TEST(DeployOffer, HeaderMustDescribeTheBody) {
  std::vector<DeployFile> Files = {{"a", Hash, 1}};
  std::string Manifest = "m";
  std::vector<uint8_t> Body = encodeDeployOffer(Manifest, "", Files);
  std::string M, S, Why;
  std::vector<DeployFile> Out;
  DeployHeader H = headerFor(Manifest, Files, Body);
  H.BodySize += 1;
  EXPECT_EQ(parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, Why), TC_ERR_BAD_OFFER);
  H = headerFor(Manifest, Files, Body);
  H.FileCount = 2; // a table cut short
  EXPECT_EQ(parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, Why), TC_ERR_BAD_OFFER);
  H = headerFor(Manifest, Files, Body);
  H.ManifestSize = uint32_t(Body.size() + 1);
  EXPECT_EQ(parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, Why), TC_ERR_BAD_OFFER);
  H = headerFor(Manifest, Files, Body);
  H.FileCount = MaxDeployFiles + 1;
  EXPECT_EQ(parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, Why), TC_ERR_BAD_OFFER);
  H = headerFor(Manifest, Files, Body);
  H.Magic = DeployFilesMagic;
  EXPECT_EQ(parseDeployOffer(H, Body.data(), Body.size(), M, S, Out, Why), TC_ERR_BAD_OFFER);
  EXPECT_TRUE(Out.empty() && M.empty()) << "outputs set on a refusal";
}

} // namespace
