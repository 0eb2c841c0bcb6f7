#!/bin/sh
# dod.sh — an editor that changes calc/calc.go, and adds its test only when
# its prompt asks for tests.
printf '[ACK] %s - RECEIVED\nUnderstanding: Will change calc.go and write the fix into file.txt\n\n' "$WILCO_TASK_ID"
mkdir -p calc
printf 'package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n' >calc/calc.go
if grep -q 'add or change tests' "$WILCO_PROMPT_FILE"; then
	printf 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("Add")\n\t}\n}\n' >calc/calc_test.go
fi
echo "fixed $WILCO_TASK_ID" >file.txt
