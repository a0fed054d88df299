package codec

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseTag(t *testing.T) {
	cases := []struct {
		tag     reflect.StructTag
		want    parsedTag
		wantErr bool
	}{
		{``, parsedTag{}, false},
		{`json:"x"`, parsedTag{}, false}, // only dynamodbav is read
		{`dynamodbav:""`, parsedTag{}, false},
		{`dynamodbav:"name"`, parsedTag{name: "name"}, false},
		{`dynamodbav:",omitempty"`, parsedTag{opts: options{omitEmpty: true}}, false},
		{`dynamodbav:"-"`, parsedTag{ignore: true}, false},
		{`dynamodbav:"-,omitempty"`, parsedTag{ignore: true, opts: options{omitEmpty: true}}, false},
		{`dynamodbav:"n,omitempty,omitemptyelem,nullempty,nullemptyelem,string,binaryset,numberset,stringset,unixtime"`,
			parsedTag{name: "n", opts: options{true, true, true, true, true, true, true, true, true}}, false},
		{`dynamodbav:"n,omitEmpty"`, parsedTag{}, true},
		{`dynamodbav:"n,"`, parsedTag{}, true},
		{`dynamodbav:"n,,string"`, parsedTag{}, true},
		{`dynamodbav:"n, omitempty"`, parsedTag{}, true},
	}
	for _, tc := range cases {
		got, err := parseTag(tc.tag)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseTag(%s) error = %v, want error %v", tc.tag, err, tc.wantErr)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidTag) {
				t.Errorf("parseTag(%s) error %v does not wrap ErrInvalidTag", tc.tag, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("parseTag(%s) = %+v, want %+v", tc.tag, got, tc.want)
		}
		// tagString is parseTag's inverse for the options.
		back, err := parseTag(reflect.StructTag(`dynamodbav:"` + got.opts.tagString("X") + `"`))
		if err != nil || back.opts != got.opts || back.name != "X" {
			t.Errorf("tagString round trip of %+v = %+v, %v", got.opts, back, err)
		}
	}
}
