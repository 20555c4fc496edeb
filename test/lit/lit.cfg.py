# lit configuration for Two-Chains. Substitutions:
#   %jamcc      clang -x c -O2 with the jam plugin, for x86_64
#   %jamcc-a64  the same for aarch64 (REQUIRES: aarch64-headers)
#   %jamcc-a64-sandbox  the same for the sandbox (twochains-jamcc --sandbox)
#   %jamcc-x86-sandbox  x86_64 for the sandbox
#   %sandbox-as the sandbox's assembler hook (--emit-rewritten shows rewrites)
#   %jamopt     opt with the jam passes loaded
#   %jamlink    the jam linker
#   %verify     twochains-verify, the sandbox's verifier
#   %run-jam    test/harness/run-jam.sh: build a jam both ways and run it in
#               the loader harness (features: harness-aarch64 under qemu)
#   %harness    the host's loader harness (x86_64)
#   %clang, %plugin, %pass-plugin, %include
# Parameter: --param disable-pass=1 runs the suite with the jam pass switched
# off (TWOCHAINS_JAM_DISABLE_PASS), to show which tests depend on it.
import os
import platform
import sys
import lit.formats

config.name = "TwoChains"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".c", ".amc", ".ll", ".s", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.twochains_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
if lit_config.params.get("disable-pass", "0") not in ("0", ""):
    config.environment["TWOCHAINS_JAM_DISABLE_PASS"] = "1"

jamcc = "%s -x c -O2 -fplugin=%s -I%s" % (config.clang, config.jam_plugin, config.include_dir)
config.substitutions.append(("%jamcc-a64-sandbox", jamcc + " --target=aarch64-linux-gnu"
                              " -fplugin-arg-twochains-sandbox -fno-integrated-as -B" + config.sandbox_dir))
config.substitutions.append(("%jamcc-x86-sandbox", jamcc + " --target=x86_64-linux-gnu"
                              " -fplugin-arg-twochains-sandbox -fno-integrated-as -B" + config.sandbox_dir))
config.substitutions.append(("%sandbox-as", os.path.join(config.sandbox_dir, "as")))
config.substitutions.append(("%jamcc-a64", jamcc + " --target=aarch64-linux-gnu"))
config.substitutions.append(("%jamcc", jamcc + " --target=x86_64-linux-gnu"))
config.substitutions.append(("%jamopt", "opt -load-pass-plugin=%s" % config.jam_pass_plugin))
config.substitutions.append(("%pass-plugin", config.jam_pass_plugin))
config.substitutions.append(("%plugin", config.jam_plugin))
config.substitutions.append(("%include", config.include_dir))
config.substitutions.append(("%clang", config.clang))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%jamlink", config.jamlink))
config.substitutions.append(("%pkg-gen", config.pkg_gen))
config.substitutions.append(("%verify", config.verify))
config.substitutions.append(("%harness-a64", os.path.join(config.harness_dir, "aarch64", "jam-harness")))
config.substitutions.append(("%harness", os.path.join(config.harness_dir, "jam-harness")))
config.substitutions.append(("%run-jam", "bash %s/test/harness/run-jam.sh" % config.twochains_src_root))
for var, value in [("TC_CLANG", config.clang), ("TC_PLUGIN", config.jam_plugin),
                   ("TC_INCLUDE", config.include_dir), ("TC_JAMLINK", config.jamlink),
                   ("TC_SANDBOX_DIR", config.sandbox_dir),
                   ("TC_HARNESS_DIR", config.harness_dir)]:
    config.environment[var] = value
if os.path.exists(os.path.join(config.harness_dir, "aarch64", "jam-harness")) and \
        os.path.exists("/usr/bin/qemu-aarch64"):
    config.available_features.add("harness-aarch64")

if platform.machine() == "x86_64":
    config.available_features.add("x86_64-host")

if os.path.exists("/usr/aarch64-linux-gnu/include/stdio.h"):
    config.available_features.add("aarch64-headers")
