package diagnose

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// analyseCase is one sample of real-looking output and what the analyser
// must make of it. Empty expectations are not checked; *Has fields are
// substrings.
type analyseCase struct {
	name     string
	command  string
	exit     int
	timedOut bool
	timeout  time.Duration
	output   string

	summary    string
	summaryHas string
	errorHas   string
	causeHas   string
	fixHas     string
	escalate   string
	tests      []string
}

var analyseCases = []analyseCase{
	// Go.
	{name: "go missing module", command: "go test ./...", exit: 1, output: `internal/planner/id.go:6:2: no required module provides package github.com/google/uuid; to add it:
	go get github.com/google/uuid
FAIL	example.com/app/internal/planner [setup failed]
FAIL
`, errorHas: "no required module provides package github.com/google/uuid", causeHas: "Missing Go module dependency",
		fixHas: "go get github.com/google/uuid"},
	{name: "go missing go.sum", command: "go build ./...", exit: 1, output: `main.go:5:2: missing go.sum entry for module providing package golang.org/x/sync/errgroup (imported by example.com/app); to add:
	go get example.com/app
`, fixHas: "go mod tidy"},
	{name: "go cannot find package", command: "go build", exit: 1, output: `main.go:4:2: cannot find package "github.com/acme/widgets" in any of:
	/usr/local/go/src/github.com/acme/widgets (from $GOROOT)
	/home/u/go/src/github.com/acme/widgets (from $GOPATH)
`, causeHas: "cannot find package github.com/acme/widgets", fixHas: "go get github.com/acme/widgets"},
	{name: "go package not in std", command: "go vet ./...", exit: 1, output: "main.go:4:2: package acme/widgets is not in std (/usr/local/go/src/acme/widgets)\n",
		causeHas: "acme/widgets", fixHas: "import path"},
	{name: "go undefined", command: "go test ./...", exit: 1, output: `# example.com/app/internal/planner
internal/planner/id.go:12:9: undefined: NewPlannerID
internal/planner/id.go:20:2: "strings" imported and not used
FAIL	example.com/app/internal/planner [build failed]
FAIL
`, summary: "internal/planner/id.go:12:9: undefined: NewPlannerID", causeHas: "Go compile error at internal/planner/id.go:12: undefined: NewPlannerID",
		fixHas: "Declare NewPlannerID"},
	{name: "go unused import", command: "go build ./...", exit: 1, output: "# example.com/app\n./main.go:5:2: \"os\" imported and not used\n",
		causeHas: "main.go:5", fixHas: "Remove the unused import at main.go:5"},
	{name: "go vet", command: "go vet ./...", exit: 1, output: "# example.com/app\n./log.go:14:2: fmt.Printf format %d has arg name of wrong type string\n",
		causeHas: "log.go:14", fixHas: "Fix the error at log.go:14"},
	{name: "go syntax error", command: "go test ./...", exit: 1, output: "# example.com/app\n./main.go:9:1: syntax error: unexpected }, expected expression\n",
		causeHas: "Go syntax error at main.go:9", fixHas: "unexpected }"},
	{name: "go failing tests", command: "go test ./...", exit: 1, output: `--- FAIL: TestPlannerID (0.00s)
    --- FAIL: TestPlannerID/empty (0.00s)
        id_test.go:25: NewPlannerID("") error = <nil>, want ErrInvalidPlannerID
    --- FAIL: TestPlannerID/whitespace (0.00s)
        id_test.go:25: NewPlannerID("   ") error = <nil>, want ErrInvalidPlannerID
--- FAIL: TestParse (0.00s)
    parse_test.go:40: got 3, want 4
FAIL
FAIL	example.com/app/internal/planner	0.004s
ok  	example.com/app/internal/store	0.010s
FAIL
`, summary: "3 failed: TestPlannerID/empty, TestPlannerID/whitespace, TestParse", tests: []string{"TestPlannerID/empty", "TestPlannerID/whitespace", "TestParse"},
		causeHas: "3 tests failed: TestPlannerID/empty", errorHas: `id_test.go:25: NewPlannerID("") error = <nil>`, fixHas: "Make TestPlannerID/empty pass"},
	{name: "go test -v counts", command: "go test -v ./...", exit: 1, output: `=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
    b_test.go:9: boom
--- FAIL: TestB (0.00s)
=== RUN   TestC
--- PASS: TestC (0.00s)
FAIL
`, summary: "2 passed, 1 failed", tests: []string{"TestB"}, errorHas: "b_test.go:9: boom"},
	{name: "go panic", command: "go test ./...", exit: 1, output: `--- FAIL: TestQueue (0.00s)
panic: runtime error: index out of range [3] with length 3 [recovered]
	panic: runtime error: index out of range [3] with length 3

goroutine 7 [running]:
testing.tRunner.func1.2({0x5f1b40, 0xc000016150})
	/usr/local/go/src/testing/testing.go:1545 +0x238
panic({0x5f1b40?, 0xc000016150?})
	/usr/local/go/src/runtime/panic.go:914 +0x21f
example.com/app/queue.(*Queue).Pop(...)
	/home/dev/app/queue/queue.go:42
example.com/app/queue.TestQueue(0x0?)
	/home/dev/app/queue/queue_test.go:17 +0x1d
FAIL	example.com/app/queue	0.005s
`, causeHas: "Panic at /home/dev/app/queue/queue.go:42: runtime error: index out of range", fixHas: "Check the length before indexing", tests: []string{"TestQueue"}},
	{name: "go nil map", command: "go run .", exit: 2, output: "panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/app/main.go:8 +0x2c\nexit status 2\n",
		causeHas: "main.go:8", fixHas: "Make the map"},
	{name: "go race", command: "go test -race ./...", exit: 1, output: `==================
WARNING: DATA RACE
Write at 0x00c00001c0f8 by goroutine 8:
  example.com/app/counter.(*Counter).Inc()
      /home/dev/app/counter/counter.go:11 +0x44

Previous read at 0x00c00001c0f8 by goroutine 7:
  example.com/app/counter.(*Counter).Get()
      /home/dev/app/counter/counter.go:15 +0x3a
==================
--- FAIL: TestCounter (0.00s)
    testing.go:1465: race detected during execution of test
FAIL
`, causeHas: "Data race detected by the race detector at /home/dev/app/counter/counter.go:11", fixHas: "mutex", tests: []string{"TestCounter"}},
	{name: "go test timeout", command: "go test -timeout 30s ./...", exit: 1, output: `panic: test timed out after 30s
running tests:
	TestWaitForever (30s)

goroutine 18 [running]:
testing.(*M).startAlarm.func1()
	/usr/local/go/src/testing/testing.go:2259 +0x3b9
`, causeHas: "while TestWaitForever was running", fixHas: "-timeout"},

	// Node.
	{name: "node missing module", command: "npm test -- PlannerId", exit: 1, output: `> app@1.0.0 test
> jest PlannerId

 FAIL  tests/PlannerId.test.ts
  ● Test suite failed to run

    Cannot find module 'uuid' from 'src/domain/PlannerId.ts'

    Require stack:
      src/domain/PlannerId.ts
      tests/PlannerId.test.ts

Test Suites: 1 failed, 1 total
Tests:       0 total
`, errorHas: "Cannot find module 'uuid'", causeHas: "Missing dependency: the package uuid", fixHas: "npm install uuid"},
	{name: "node missing scoped deep module", command: "node index.js", exit: 1, output: `node:internal/modules/cjs/loader:1080
  throw err;
  ^

Error: Cannot find module '@acme/logger/console'
Require stack:
- /app/index.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1077:15) {
  code: 'MODULE_NOT_FOUND',
}
`, fixHas: "npm install @acme/logger"},
	{name: "node missing relative module", command: "npx jest", exit: 1, output: "    Cannot find module './utils/format' from 'src/index.ts'\n",
		causeHas: "does not exist", fixHas: "Create ./utils/format or fix the import path"},
	{name: "esm missing package", command: "node main.mjs", exit: 1, output: "node:internal/errors:496\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /app/main.mjs\n",
		fixHas: "npm install zod"},
	{name: "jest failing tests", command: "npm test -- PlannerId", exit: 1, output: `FAIL tests/PlannerId.test.ts
  PlannerId
    ✓ accepts a valid uuid (3 ms)
    ✕ rejects empty string (2 ms)
    ✕ rejects null (1 ms)

  ● PlannerId › rejects empty string

    expect(received).toThrow(expected)

    Expected constructor: InvalidPlannerIdError

    Received function did not throw

  ● PlannerId › rejects null

    expect(received).toThrow(expected)

Test Suites: 1 failed, 1 total
Tests:       2 failed, 1 passed, 3 total
Snapshots:   0 total
Time:        1.234 s
`, summary: "1 passed, 2 failed", tests: []string{"PlannerId › rejects empty string", "PlannerId › rejects null"}, causeHas: "2 tests failed"},
	{name: "vitest", command: "npx vitest run", exit: 1, output: "\x1b[31m FAIL \x1b[39m tests/math.test.ts > add > adds negatives\n" + `AssertionError: expected -1 to be -3 // Object.is equality

- Expected
+ Received

 ❯ tests/math.test.ts:12:22

 Test Files  1 failed (1)
      Tests  1 failed | 4 passed (5)
   Start at  10:00:00
   Duration  312ms
`, summary: "4 passed, 1 failed", tests: []string{"tests/math.test.ts > add > adds negatives"}, errorHas: "AssertionError: expected -1 to be -3"},
	{name: "mocha", command: "npx mocha", exit: 2, output: `

  PlannerId
    ✔ accepts a valid uuid
    1) rejects empty string
    2) rejects null


  1 passing (8ms)
  2 failing

  1) PlannerId
       rejects empty string:
     AssertionError [ERR_ASSERTION]: Missing expected exception (InvalidPlannerIdError).
      at Context.<anonymous> (test/planner.test.js:12:12)

  2) PlannerId
       rejects null:
     AssertionError [ERR_ASSERTION]: Missing expected exception (InvalidPlannerIdError).
`, summary: "1 passed, 2 failed", tests: []string{"PlannerId rejects empty string", "PlannerId rejects null"}, errorHas: "AssertionError [ERR_ASSERTION]"},
	{name: "node:test", command: "node --test", exit: 1, output: `TAP version 13
# Subtest: adds
ok 1 - adds
# Subtest: subtracts
not ok 2 - subtracts
  ---
  duration_ms: 0.5
  ...
1..2
# tests 2
# pass 1
# fail 1
`, summary: "1 passed, 1 failed", tests: []string{"subtracts"}},
	{name: "typescript TS2304", command: "npx tsc --noEmit", exit: 2, output: "src/domain/PlannerId.ts(14,11): error TS2304: Cannot find name 'InvalidPlannerIdError'.\n",
		causeHas: "TypeScript error TS2304 at src/domain/PlannerId.ts:14", fixHas: "Declare or import InvalidPlannerIdError"},
	{name: "typescript pretty", command: "npx tsc", exit: 2, output: "\x1b[96msrc/app.ts\x1b[0m:\x1b[93m3\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'.\n",
		causeHas: "TS2322 at src/app.ts:3", fixHas: "Make the types agree"},
	{name: "typescript missing types", command: "npx tsc", exit: 2, output: "src/a.ts(1,20): error TS2307: Cannot find module 'lodash' or its corresponding type declarations.\n",
		fixHas: "npm install lodash"},
	{name: "js syntax error", command: "node app.js", exit: 1, output: `/app/src/app.js:12
  return {
         ^

SyntaxError: Unexpected token '}'
    at internalCompileFunction (node:internal/vm:76:18)
`, causeHas: "Syntax error in /app/src/app.js line 12: Unexpected token '}'", summary: "SyntaxError: Unexpected token '}'"},
	{name: "npm missing script", command: "npm test", exit: 1, output: "npm ERR! Missing script: \"test\"\nnpm ERR! \nnpm ERR! To see a list of scripts, run:\nnpm ERR!   npm run\n",
		fixHas: "Add a \"test\" script to package.json"},

	// Python.
	{name: "python missing module", command: "pytest", exit: 2, output: `==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_client.py _____________________
ImportError while importing test module '/app/tests/test_client.py'.
tests/test_client.py:3: in <module>
    import requests
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/test_client.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.05s ===============================
`, errorHas: "No module named 'requests'", causeHas: "Missing Python dependency", fixHas: "pip install requests", summary: "0 passed, 0 failed, 1 error"},
	{name: "python missing module with other name", command: "python -m app", exit: 1, output: "Traceback (most recent call last):\n  File \"/app/app/__main__.py\", line 1, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'\n",
		fixHas: "pip install PyYAML"},
	{name: "python cannot import name", command: "pytest", exit: 2, output: "E   ImportError: cannot import name 'parse_id' from 'app.ids' (/app/app/ids.py)\n",
		causeHas: "app.ids has no name parse_id"},
	{name: "pytest failures", command: "pytest -q", exit: 1, output: `..F.F                                                                    [100%]
=================================== FAILURES ===================================
_________________________________ test_empty __________________________________

    def test_empty():
>       assert parse("") == []
E       AssertionError: assert None == []
E        +  where None = parse('')

tests/test_parse.py:8: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parse.py::test_empty - AssertionError: assert None == []
FAILED tests/test_parse.py::test_spaces - AssertionError: assert None == []
========================= 2 failed, 3 passed in 0.12s ==========================
`, summary: "3 passed, 2 failed", tests: []string{"tests/test_parse.py::test_empty", "tests/test_parse.py::test_spaces"},
		errorHas: "AssertionError: assert None == []", causeHas: "2 tests failed: tests/test_parse.py::test_empty"},
	{name: "python syntax error", command: "pytest", exit: 2, output: `E     File "/app/app/ids.py", line 12
E       def parse(s:
E                  ^
E   SyntaxError: '(' was never closed
`, causeHas: "Python SyntaxError in /app/app/ids.py line 12: '(' was never closed"},
	{name: "python indentation error", command: "python app.py", exit: 1, output: "  File \"app.py\", line 4\n    return x\n    ^\nIndentationError: unexpected indent\n",
		causeHas: "Python IndentationError in app.py line 4"},
	{name: "unittest", command: "python -m unittest", exit: 1, output: `F.E
======================================================================
ERROR: test_load (tests.test_store.StoreTest)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/app/tests/test_store.py", line 20, in test_load
    store.load()
KeyError: 'id'

======================================================================
FAIL: test_save (tests.test_store.StoreTest)
----------------------------------------------------------------------
AssertionError: 1 != 2

----------------------------------------------------------------------
Ran 3 tests in 0.002s

FAILED (failures=1, errors=1)
`, summary: "1 passed, 1 failed, 1 error", tests: []string{"tests.test_store.StoreTest.test_load", "tests.test_store.StoreTest.test_save"}},

	{name: "python uncaught exception", command: "python -m app", exit: 1, output: `Traceback (most recent call last):
  File "/app/app/__main__.py", line 4, in <module>
    main()
  File "/app/app/cli.py", line 31, in main
    cfg = load(path)["server"]
KeyError: 'server'
`, causeHas: "Uncaught KeyError in /app/app/cli.py line 31: 'server'", errorHas: "KeyError: 'server'"},
	{name: "node uncaught TypeError", command: "node index.js", exit: 1, output: `/app/src/index.js:7
  return user.name.trim();
                   ^

TypeError: Cannot read properties of undefined (reading 'trim')
    at greet (/app/src/index.js:7:20)
    at Object.<anonymous> (/app/src/index.js:10:1)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)
`, causeHas: "Uncaught TypeError at /app/src/index.js:7: Cannot read properties of undefined", summary: "TypeError: Cannot read properties of undefined (reading 'trim')"},

	// Rust.
	{name: "rust unresolved import of a crate", command: "cargo test", exit: 101, output: "error[E0432]: unresolved import `rand`\n --> src/main.rs:1:5\n  |\n1 | use rand::Rng;\n  |     ^^^^ use of undeclared crate or module `rand`\n\nFor more information about this error, try `rustc --explain E0432`.\nerror: could not compile `app` (bin \"app\") due to 1 previous error\n",
		causeHas: "Missing crate or module rand (src/main.rs:1)", fixHas: "cargo add rand"},
	{name: "rust unlinked crate (newer rustc)", command: "cargo build", exit: 101, output: "error[E0433]: failed to resolve: use of unresolved module or unlinked crate `serde_json`\n --> src/lib.rs:7:13\n  |\n7 |     let v = serde_json::from_str(s)?;\n",
		fixHas: "cargo add serde_json"},
	{name: "rust unresolved import inside the crate", command: "cargo build", exit: 101, output: "error[E0432]: unresolved import `crate::store::Sled`\n --> src/lib.rs:3:5\n  |\n3 | use crate::store::Sled;\n  |     ^^^^^^^^^^^^^^^^^^ no `Sled` in `store`\n",
		causeHas: "Unresolved import crate::store::Sled at src/lib.rs:3", fixHas: "Fix the path"},
	{name: "rust E0425", command: "cargo build", exit: 101, output: "   Compiling app v0.1.0 (/app)\nerror[E0425]: cannot find value `limit` in this scope\n  --> src/queue.rs:14:20\n   |\n14 |         if len >= limit {\n   |                   ^^^^^ not found in this scope\n",
		causeHas: "Rust compile error E0425 at src/queue.rs:14: cannot find value `limit` in this scope", fixHas: "Declare limit"},
	{name: "rust missing crate in Cargo.toml", command: "cargo build", exit: 101, output: "    Updating crates.io index\nerror: no matching package named `serde_jsn` found\nlocation searched: registry `crates-io`\nrequired by package `app v0.1.0 (/app)`\n",
		fixHas: "Fix the dependency name serde_jsn in Cargo.toml"},
	{name: "rust test failures", command: "cargo test", exit: 101, output: `running 3 tests
test tests::parses_ids ... ok
test tests::rejects_empty ... FAILED
test tests::rejects_spaces ... FAILED

failures:

---- tests::rejects_empty stdout ----
thread 'tests::rejects_empty' panicked at src/lib.rs:41:9:
assertion ` + "`left == right`" + ` failed
  left: None
 right: Some(Error)

failures:
    tests::rejects_empty
    tests::rejects_spaces

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass ` + "`--lib`" + `
`, summary: "1 passed, 2 failed", tests: []string{"tests::rejects_empty", "tests::rejects_spaces"}, errorHas: "src/lib.rs:41: assertion `left == right` failed"},
	{name: "rust old panic format", command: "cargo test", exit: 101, output: "test t::a ... FAILED\n---- t::a stdout ----\nthread 't::a' panicked at 'boom', src/lib.rs:3:5\ntest result: FAILED. 0 passed; 1 failed; 0 ignored\n",
		errorHas: "src/lib.rs:3: boom", summary: "0 passed, 1 failed"},

	// Anything.
	{name: "missing program", command: "gotestsum ./...", exit: 127, output: "sh: 1: gotestsum: not found\n",
		causeHas: "The program gotestsum is not installed", fixHas: "Install gotestsum"},
	{name: "missing program (bash)", command: "make test", exit: 127, output: "bash: line 1: make: command not found\n", causeHas: "The program make is not installed"},
	{name: "unknown failure", command: "./check.sh", exit: 3, output: "checking…\nsomething went sideways\n",
		summary: "something went sideways", causeHas: "exited with code 3: something went sideways"},
	{name: "silent failure", command: "false", exit: 1, output: "", summary: "exit code 1", causeHas: "without saying why", fixHas: "false"},
	{name: "timeout", command: "sleep 60", exit: 137, timedOut: true, timeout: 300 * time.Millisecond, output: "waiting for the lock\n",
		summary: "timed out after 300ms; waiting for the lock", errorHas: "timed out after 300ms", causeHas: "did not finish within 300ms", fixHas: "raise the step's timeout"},
	{name: "timeout in a go test", command: "go test -v ./...", exit: 137, timedOut: true, timeout: 2 * time.Minute, output: "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestHang\n",
		causeHas: "TestHang was still running", fixHas: "in TestHang"},

	// Escalations (at once).
	{name: "permission denied (Go)", command: "go test ./...", exit: 1, output: "--- FAIL: TestWrite (0.00s)\n    store_test.go:12: open /var/lib/app/data.db: permission denied\nFAIL\n",
		escalate: EscalatePermissionDenied, causeHas: "Permission denied", fixHas: "needs the user"},
	{name: "EACCES (npm)", command: "npm install", exit: 243, output: "npm ERR! code EACCES\nnpm ERR! syscall mkdir\nnpm ERR! path /usr/lib/node_modules/app\n",
		escalate: EscalatePermissionDenied},
	{name: "PermissionError (Python)", command: "pytest", exit: 1, output: "E   PermissionError: [Errno 13] Permission denied: '/etc/app.conf'\n", escalate: EscalatePermissionDenied},
	{name: "shell permission denied", command: "./scripts/test.sh", exit: 126, output: "sh: 1: ./scripts/test.sh: Permission denied\n", escalate: EscalatePermissionDenied},
	{name: "connection refused to a remote host", command: "go test ./...", exit: 1, output: "--- FAIL: TestDB (0.01s)\n    db_test.go:20: dial tcp 10.20.0.5:5432: connect: connection refused\n",
		escalate: EscalateServiceUnavailable, causeHas: "(10.20.0.5)"},
	{name: "connection refused to localhost is the code's", command: "go test ./...", exit: 1, output: "--- FAIL: TestServer (0.01s)\n    server_test.go:30: Get \"http://127.0.0.1:8080/health\": dial tcp 127.0.0.1:8080: connect: connection refused\n",
		escalate: "", tests: []string{"TestServer"}},
	{name: "ECONNREFUSED to localhost", command: "npm test", exit: 1, output: "Error: connect ECONNREFUSED 127.0.0.1:5432\n", escalate: ""},
	{name: "python connection refused remote", command: "pytest", exit: 1, output: "E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='api.example.com', port=80): Max retries exceeded with url: / (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f3a>: Failed to establish a new connection: [Errno 111] Connection refused'))\n",
		escalate: EscalateServiceUnavailable, causeHas: "api.example.com"},
	{name: "could not resolve host", command: "git submodule update", exit: 128, output: "fatal: unable to access 'https://git.example.com/lib.git/': Could not resolve host: git.example.com\n",
		escalate: EscalateServiceUnavailable, causeHas: "git.example.com"},
	{name: "go proxy lookup fails", command: "go mod download", exit: 1, output: "go: example.com/lib@v1.2.0: Get \"https://goproxy.example.org/example.com/lib/@v/v1.2.0.mod\": dial tcp: lookup goproxy.example.org on 127.0.0.53:53: no such host\n",
		escalate: EscalateServiceUnavailable, causeHas: "goproxy.example.org"},
	{name: "npm registry timeout", command: "npm ci", exit: 1, output: "npm ERR! code ETIMEDOUT\nnpm ERR! errno ETIMEDOUT\nnpm ERR! network request to https://registry.example.com/uuid failed, reason: connect ETIMEDOUT 203.0.113.7:443\n",
		escalate: EscalateServiceUnavailable, causeHas: "203.0.113.7"},
	{name: "pip read timeout", command: "pip install -r requirements.txt", exit: 1, output: "WARNING: Retrying (Retry(total=4)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='pypi.example.org', port=443): Read timed out. (read timeout=15)\")': /simple/requests/\n",
		escalate: EscalateServiceUnavailable, causeHas: "pypi.example.org"},
	{name: "503 from a registry", command: "cargo build", exit: 101, output: "error: failed to download from `https://static.example.com/crates/serde/1.0.0/download`\n\nCaused by:\n  failed to get successful HTTP response from `https://static.example.com/crates/serde/1.0.0/download`, got 503\n  body:\n  503 Service Unavailable\n",
		escalate: EscalateServiceUnavailable},
	{name: "a local i/o timeout is not an escalation", command: "go test ./...", exit: 1, output: "--- FAIL: TestRead (0.5s)\n    conn_test.go:44: read tcp 127.0.0.1:40000->127.0.0.1:9000: i/o timeout\n",
		escalate: ""},
	{name: "a test file and line is not a host", command: "go test ./...", exit: 1, output: "--- FAIL: TestX (0.00s)\n    x_test.go:12: connection refused\n", escalate: ""},
}

func TestAnalyse(t *testing.T) {
	t.Parallel()
	for _, c := range analyseCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := Analyse(Input{Command: c.command, ExitCode: c.exit, Output: c.output, TimedOut: c.timedOut, Timeout: c.timeout})
			check := func(field, got, want string, exact bool) {
				t.Helper()
				if want == "" {
					return
				}
				if exact && got != want || !exact && !strings.Contains(got, want) {
					t.Errorf("%s = %q, want %s %q", field, got, map[bool]string{true: "", false: "containing"}[exact], want)
				}
			}
			check("Summary", a.Summary, c.summary, true)
			check("Summary", a.Summary, c.summaryHas, false)
			check("Error", a.Error, c.errorHas, false)
			check("RootCause", a.RootCause, c.causeHas, false)
			check("SuggestedFix", a.SuggestedFix, c.fixHas, false)
			if a.Escalate != c.escalate {
				t.Errorf("Escalate = %q, want %q (cause %q)", a.Escalate, c.escalate, a.RootCause)
			}
			if c.tests != nil && !slices.Equal(a.Tests, c.tests) {
				t.Errorf("Tests = %q, want %q", a.Tests, c.tests)
			}
			if a.Summary == "" || a.RootCause == "" || a.SuggestedFix == "" {
				t.Errorf("empty field in %+v", a)
			}
			checkBounded(t, a)
			if t.Failed() {
				t.Logf("analysis: %+v", a)
			}
		})
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line of output\n", 1000) + "the end\n"
	got := Tail(long, 2048)
	if len(got) > 2048 || !strings.HasSuffix(got, "the end") || !strings.HasPrefix(got, "line of output") {
		t.Fatalf("Tail = %d bytes, %q…", len(got), got[:min(40, len(got))])
	}
	if got := Tail("short\n", 2048); got != "short" {
		t.Fatalf("Tail(short) = %q", got)
	}
	if got := Tail(strings.Repeat("é", 3000), 101); len(got) > 101 || !strings.HasPrefix(got, "é") {
		t.Fatalf("Tail cut a rune: %q", got[:4])
	}
	if got := Tail("\x1b[31mred\x1b[0m\r\n", 100); got != "red" {
		t.Fatalf("Tail kept escapes: %q", got)
	}
}
