package settingnames

import "reflect"

// Fill sets each empty string field of the struct *names points to to the
// field's own name. It panics when names is not a pointer to a struct: a
// programming error, seen at the first connection any test makes.
func Fill[T any](names *T) {
	v := reflect.ValueOf(names).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String && f.String() == "" {
			f.SetString(t.Field(i).Name)
		}
	}
}
