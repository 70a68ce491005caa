package opensearchlocal

import (
	"fmt"
)

// finishKNN validates a knn_vector definition the way the k-NN plugin (2.19) does.
func (f *field) finishKNN(v *jv) *osError {
	dim := v.get("dimension")
	if dim == nil {
		if v.get("model_id") != nil {
			return errUnsupported("knn_vector [model_id] (trained models)")
		}
		return errIllegalArgument("Dimension value missing for vector: %s", f.name)
	}
	n, ok := dim.int()
	if !ok {
		return errMapperParsing("Unable to parse [dimension] from provided value [%s] for vector [%s]", dim.text(), f.name)
	}
	if n <= 0 {
		return errIllegalArgument("Dimension value must be greater than 0 for vector: %s", f.name)
	}
	if n > 16000 {
		return errIllegalArgument("Dimension value cannot be greater than 16000 for vector: %s", f.name)
	}
	k := &knnField{dimension: int(n), space: spaceL2, engine: engineFaiss}
	topSpace := ""
	if s := v.get("space_type"); s != nil {
		topSpace = s.text()
		if !validSpace(topSpace) {
			return errIllegalArgument("Unable to find space: %s", topSpace)
		}
		k.space = topSpace
	}
	if dt := v.get("data_type"); dt != nil && dt.text() != "float" {
		if dt.text() == "byte" || dt.text() == "binary" {
			return errUnsupported("knn_vector data_type [%s]", dt.text())
		}
		return errIllegalArgument("Invalid value provided for [data_type] field. Supported values are [binary, byte, float]")
	}
	if md := v.get("mode"); md != nil && md.text() != "in_memory" {
		if md.text() == "on_disk" {
			return errUnsupported("knn_vector mode [on_disk] (quantized vectors with rescoring)")
		}
		return errIllegalArgument("Invalid mode: %s", md.text())
	}
	if cl := v.get("compression_level"); cl != nil && cl.text() != "1x" {
		return errUnsupported("knn_vector compression_level [%s]", cl.text())
	}
	if meth := v.get("method"); meth != nil {
		if err := parseKNNMethod(meth, k, topSpace); err != nil {
			return err
		}
	}
	f.knn = k
	return nil
}

func validSpace(s string) bool {
	switch s {
	case spaceL2, spaceCosine, spaceInnerProduct, spaceL1, spaceLinf:
		return true
	case "hamming", "hammingbit":
		return true
	}
	return false
}

func parseKNNMethod(meth *jv, k *knnField, topSpace string) *osError {
	if meth.k != kObject {
		return errMapperParsing("Unable to parse [method] for vector: expected a map")
	}
	name := ""
	methodSpace := ""
	for _, mm := range meth.obj {
		switch mm.key {
		case "name":
			if mm.val.k != kString {
				return errMapperParsing("Component name should be a string")
			}
			name = mm.val.s
		case "engine":
			k.engine = mm.val.text()
		case "space_type":
			methodSpace = mm.val.text()
		case "parameters":
			if mm.val.k != kObject && mm.val.k != kNull {
				return errMapperParsing("Unable to parse parameters for main method component")
			}
		default:
			return errMapperParsing("Invalid parameter for MethodComponentContext: %s", mm.key)
		}
	}
	if name == "" {
		return errMapperParsing("name needs to be set")
	}
	switch k.engine {
	case engineFaiss, engineLucene, engineNmslib:
	default:
		return errIllegalArgument("Invalid engine type: %s", k.engine)
	}
	if methodSpace != "" {
		if !validSpace(methodSpace) {
			return errIllegalArgument("Unable to find space: %s", methodSpace)
		}
		if topSpace != "" && topSpace != methodSpace {
			return errMapperParsing("Space type in \"method\" and top level space type should be same or one of them should be defined")
		}
		k.space = methodSpace
	}
	if k.space == "hamming" || k.space == "hammingbit" {
		return errUnsupported("space_type [%s] (binary vectors)", k.space)
	}
	if name == "ivf" {
		return errUnsupported("method [ivf] (needs a trained model)")
	}
	if name != "hnsw" {
		return errValidation(fmt.Sprintf("Invalid method name: %s", name))
	}
	if !contains(engineSpaces[k.engine], k.space) {
		return errValidation(fmt.Sprintf("%q engine does not support space type %q", k.engine, k.space))
	}
	if params := meth.get("parameters"); params != nil && params.k == kObject {
		for _, pm := range params.obj {
			switch pm.key {
			case "m", "ef_construction", "ef_search":
				n, ok := pm.val.int()
				if !ok || n <= 0 {
					return errValidation(fmt.Sprintf("Parameter [%s] must be a positive integer", pm.key))
				}
				if pm.key == "ef_search" && k.engine == engineLucene {
					return errValidation("Invalid parameter for method hnsw: ef_search")
				}
			case "encoder":
				return errUnsupported("hnsw [encoder] (quantization)")
			default:
				return errValidation(fmt.Sprintf("Invalid parameter for method hnsw: %s", pm.key))
			}
		}
	}
	return nil
}

// checkKNNIndex enforces the k-NN plugin's rule that ANN methods need a k-NN index.
func checkKNNIndex(f *field, knnIndex bool) *osError {
	if f.typ == "knn_vector" && !knnIndex {
		for _, p := range f.params {
			if p.k == "method" || p.k == "model_id" {
				return errIllegalArgument("Cannot set modelId or method parameters when index.knn setting is false")
			}
		}
	}
	for _, p := range f.props {
		if e := checkKNNIndex(p, knnIndex); e != nil {
			return e
		}
	}
	return nil
}
