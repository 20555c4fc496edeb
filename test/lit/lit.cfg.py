# lit configuration for Two-Chains. Substitutions:
#   %jamcc      clang -x c -O2 with the jam plugin, for x86_64
#   %jamcc-a64  the same for aarch64 (REQUIRES: aarch64-headers)
#   %jamopt     opt with the jam passes loaded
#   %clang, %plugin, %pass-plugin, %include
# Parameter: --param disable-pass=1 runs the suite with the jam pass switched
# off (TWOCHAINS_JAM_DISABLE_PASS), to show which tests depend on it.
import os
import lit.formats

config.name = "TwoChains"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".c", ".amc", ".ll", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.twochains_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
if lit_config.params.get("disable-pass", "0") not in ("0", ""):
    config.environment["TWOCHAINS_JAM_DISABLE_PASS"] = "1"

jamcc = "%s -x c -O2 -fplugin=%s -I%s" % (config.clang, config.jam_plugin, config.include_dir)
config.substitutions.append(("%jamcc-a64", jamcc + " --target=aarch64-linux-gnu"))
config.substitutions.append(("%jamcc", jamcc + " --target=x86_64-linux-gnu"))
config.substitutions.append(("%jamopt", "opt -load-pass-plugin=%s" % config.jam_pass_plugin))
config.substitutions.append(("%pass-plugin", config.jam_pass_plugin))
config.substitutions.append(("%plugin", config.jam_plugin))
config.substitutions.append(("%include", config.include_dir))
config.substitutions.append(("%clang", config.clang))

if os.path.exists("/usr/aarch64-linux-gnu/include/stdio.h"):
    config.available_features.add("aarch64-headers")
